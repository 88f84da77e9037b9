package testenv

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// RPCClient speaks JSON-RPC to a child over its stdin and stdout, one
// message a line, as Claude Code speaks to a stdio MCP server.
type RPCClient struct {
	tb     testing.TB
	Cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	next   int
	stderr bytes.Buffer // read only once Wait returned
}

// StartShimRPC starts `mcp-heal shim` with args and env (shimCommand) as
// an RPCClient's child.
func StartShimRPC(tb testing.TB, env []string, args ...string) *RPCClient {
	tb.Helper()
	return StartRPC(tb, shimCommand(tb, env, args...))
}

// StartRPC starts cmd and reads its stdout as JSON-RPC lines. When tb
// ends, the child's stdin is closed and it is waited for (10 s, then
// killed); if tb failed, its stderr is logged.
func StartRPC(tb testing.TB, cmd *exec.Cmd) *RPCClient {
	tb.Helper()
	c := &RPCClient{tb: tb, Cmd: cmd, lines: make(chan []byte, 64)}
	cmd.Stderr = &c.stderr
	in, out := StartPiped(tb, cmd)
	c.in = in
	go func() {
		r := jsonrpc.NewReader(out)
		for {
			l, err := r.Next()
			if err != nil {
				close(c.lines)
				return
			}
			c.lines <- bytes.Clone(l)
		}
	}()
	tb.Cleanup(func() {
		CloseAndWait(cmd, c.in, 10*time.Second)
		if tb.Failed() {
			tb.Logf("%s stderr:\n%s", cmd.Path, c.stderr.String())
		}
	})
	return c
}

// Request sends a request and waits up to timeout for its answer (ok
// false: none came). Other lines (notifications, the child's own
// requests) are passed over; the test fails if the child closes its
// stdout first.
func (c *RPCClient) Request(method, params string, timeout time.Duration) (gjson.Result, bool) {
	c.tb.Helper()
	c.next++
	id := strconv.Itoa(c.next)
	c.Send(string(jsonrpc.NewRequest([]byte(id), method, []byte(params))))
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.tb.Fatalf("%s closed its stdout before answering %s", c.Cmd.Path, method)
			}
			if r := gjson.ParseBytes(l); r.Get("id").Raw == id && !r.Get("method").Exists() {
				return r, true
			}
		case <-deadline:
			return gjson.Result{}, false
		}
	}
}

// Send writes one line to the child's stdin; the test fails if it
// cannot.
func (c *RPCClient) Send(line string) {
	c.tb.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.tb.Fatalf("write to %s: %v", c.Cmd.Path, err)
	}
}

// SocketPath returns the path of name in a new directory of the system's
// temporary directory, removed when tb ends: short enough for a unix
// socket, whose path must stay under 104 bytes (macOS) or 108 (Linux),
// which tb.TempDir's directory named after the test may not be.
func SocketPath(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "sock-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, name)
}
