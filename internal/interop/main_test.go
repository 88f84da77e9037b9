//go:build unix

package interop

import (
	"os"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// roleEnv makes the test binary play a part other than running tests.
const roleEnv = "MCP_HEAL_INTEROP_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "client-driver":
		os.Exit(clientDriver(os.Args[1:]))
	case "tasks-server":
		os.Exit(tasksServer(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// killAfter builds testdata/killafter once per test process and returns
// its path: the wrapper that SIGKILLs a server once it has answered (see
// its doc comment for why it is a program of its own).
func killAfter(t *testing.T) string {
	t.Helper()
	return testenv.Program(t, "./internal/interop/testdata/killafter")
}
