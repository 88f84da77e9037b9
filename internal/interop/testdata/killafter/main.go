//go:build unix

// Command killafter runs an MCP server on its stdin and, when the server
// writes its first response, SIGKILLs it, closes its own stdin, then passes
// the response on and SIGKILLs itself: a server that dies once it has
// answered, before its client can have sent anything after that answer, so
// nothing is in flight when it dies, whatever the load on the machine. (A
// kill at a random moment lands in the middle of a call now and then; the
// conformance fixture's tools carry no annotations, so the shim then
// rightly answers -32603 and the scenario fails for a reason that is the
// protocol's, not the shim's. TestEverythingThroughShimSurvivesKill9
// covers kills in the middle of calls.)
//
// Usage: killafter DIR SERVER [ARG...]; it leaves a file DIR/killed as it
// kills.
//
// It is a program of its own, built without -race, and not a role of the
// interop test binary: in the 2026-07-28 era every request reaches a new
// shim, so it starts once per request, and a few conformance checks give
// the server 500 ms from request to first frame. The race-enabled test
// binary took about 250 ms to start at load 8 on two cores, this about 30.
package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

func main() {
	if len(os.Args) < 3 {
		os.Exit(2)
	}
	marker := os.Args[1]
	argv := os.Args[2:]
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
