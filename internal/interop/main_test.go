package interop

import (
	"bufio"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// roleEnv makes the test binary play a part other than running tests.
const roleEnv = "MCP_HEAL_INTEROP_ROLE"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "kill-after-first-answer" {
		killAfterFirstAnswer(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// killAfterFirstAnswer runs the server argv between its stdin/stdout and
// ours and, as soon as the server has answered every request it was sent
// and at least one, SIGKILLs the server and itself: a server that dies
// while idle, between two exchanges of its client, the moment a kill leaves
// nothing in flight. (A kill at a random moment lands in the middle of a
// call now and then; the conformance fixture's tools carry no annotations,
// so the shim then rightly answers -32603 and the scenario fails for a
// reason that is the protocol's, not the shim's. TestEverythingThroughShim-
// SurvivesKill9 covers kills in the middle of calls.)
func killAfterFirstAnswer(argv []string) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		os.Exit(2)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		os.Exit(2)
	}
	var mu sync.Mutex
	outstanding := 0
	go func() {
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if m, perr := jsonrpc.Peek(line); perr == nil && m.Kind == jsonrpc.KindRequest {
					mu.Lock()
					outstanding++
					mu.Unlock()
				}
				in.Write(line)
			}
			if err != nil {
				in.Close()
				return
			}
		}
	}()
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			os.Stdout.Write(line)
			if m, perr := jsonrpc.Peek(line); perr == nil && m.Kind == jsonrpc.KindResponse {
				mu.Lock()
				outstanding--
				idle := outstanding <= 0
				mu.Unlock()
				if idle {
					cmd.Process.Kill()
					syscall.Kill(os.Getpid(), syscall.SIGKILL)
				}
			}
		}
		if err != nil {
			break
		}
	}
	cmd.Wait()
	os.Exit(1)
}
