//go:build unix

package interop

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// roleEnv makes the test binary play a part other than running tests.
const roleEnv = "MCP_HEAL_INTEROP_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "kill-after-first-answer":
		killAfterFirstAnswer(os.Args[1:])
		return
	case "client-driver":
		os.Exit(clientDriver(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// killAfterFirstAnswer runs the server argv on our stdin and, when the
// server writes its first response, SIGKILLs it, closes our stdin, then
// passes the response on and SIGKILLs itself: a server that dies once it has answered, before
// its client can have sent anything after that answer, so nothing is in
// flight when it dies, whatever the load on the machine. (A kill at a
// random moment lands in the middle of a call now and then; the
// conformance fixture's tools carry no annotations, so the shim then
// rightly answers -32603 and the scenario fails for a reason that is the
// protocol's, not the shim's. TestEverythingThroughShimSurvivesKill9
// covers kills in the middle of calls.)
//
// argv is a directory, where it leaves a file "killed" as it kills, then
// the server's command line.
func killAfterFirstAnswer(argv []string) {
	marker := argv[0]
	argv = argv[1:]
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = os.Stdin
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		os.Exit(2)
	}
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if m, perr := jsonrpc.Peek(line); perr == nil && m.Kind == jsonrpc.KindResponse {
				os.WriteFile(filepath.Join(marker, "killed"), nil, 0o600)
				cmd.Process.Kill()
				cmd.Wait()
				// No reader of the shim's pipe is left: whatever the
				// shim writes from now on fails (EPIPE) and is sent to
				// the next server, however long this process takes to
				// die on a loaded machine.
				os.Stdin.Close()
				os.Stdout.Write(line)
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			os.Stdout.Write(line)
		}
		if err != nil {
			break
		}
	}
	cmd.Wait()
	os.Exit(1)
}
