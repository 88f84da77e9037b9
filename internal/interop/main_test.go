//go:build unix

package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
	killAfterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-heal-killafter-")
		if err != nil {
			killAfterErr = err.Error()
			return
		}
		killAfterPath = filepath.Join(dir, "killafter")
		cmd := exec.Command("go", "build", "-o", killAfterPath, "./internal/interop/testdata/killafter")
		cmd.Dir = testenv.ModuleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			killAfterErr = err.Error() + "\n" + string(out)
		}
	})
	if killAfterErr != "" {
		t.Fatalf("build testdata/killafter: %s", killAfterErr)
	}
	return killAfterPath
}

var (
	killAfterOnce               sync.Once
	killAfterPath, killAfterErr string
)
