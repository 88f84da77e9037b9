//go:build unix

package shim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// The shim's tests run their server as this test binary re-executed (the
// go-sdk mcp/cmd_test.go pattern): with example.OptionsEnv set it is
// internal/example's server, the one fixture every package runs, its
// misbehaviour set by example.Faults (testServer, withServer). FAKE_MCP
// picks the few children that are not an MCP server of that kind:
//
//	wrapper   an npx-style wrapper running the server as its child
//	          (FAKE_PIDFILE: where it writes the child's pid)
//	flood     FAKE_N notifications at full speed (benchmarks)
//	sink      reads FAKE_N lines, then writes one notification (benchmarks)
//	hostile   a server that abuses its client (hostile_test.go)
//	bigfile   one huge answer (bigmsg_bench_test.go)
//	halfway   a long answer in two halves (stream_test.go)
//	spin      burns CPU until killed (relay_bench_test.go)
//	withchild the example server with a child of its own that writes
//	          elsewhere (FAKE_PIDFILE: the child's pid; liveness_binary_test.go)
//	idler     exits by itself when idle (exits_test.go)
func TestMain(m *testing.M) {
	if fake := fakes[os.Getenv("FAKE_MCP")]; fake != nil {
		fake()
		os.Exit(0)
	}
	if o, ok, err := example.OptionsFromEnv(); ok {
		os.Exit(serveExample(o, err))
	}
	os.Exit(m.Run())
}

// fakes are the children FAKE_MCP picks (TestMain says what each is).
var fakes = map[string]func(){
	"wrapper":   fakeWrapper,
	"flood":     fakeFlood,
	"sink":      fakeSink,
	"hostile":   fakeHostile,
	"bigfile":   fakeBigFile,
	"halfway":   fakeHalfway,
	"spin":      fakeSpin,
	"withchild": fakeWithChild,
	"idler":     fakeIdler,
}

// serveExample runs the example server on this process's stdio and
// returns the exit code: a simulated crash's own.
func serveExample(o example.Options, err error) int {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	err = example.Run(context.Background(), o, os.Stdin, os.Stdout, os.Stderr)
	var ee *example.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case err != nil:
		fmt.Fprintln(os.Stderr, "example-server:", err)
		return 1
	}
	return 0
}

// testServer is the server the shim's tests start from: the handshake era
// (what most servers speak today), the test tools, a line on stderr as it
// starts, its events in dir/events, its starts counted in dir/counter, and
// a next page that takes 400 ms (to be in flight when the server dies).
func testServer(dir string) example.Options {
	return example.Options{
		Era:      example.EraHandshake,
		FailFile: filepath.Join(dir, "counter"),
		Faults: example.Faults{
			StartStderr: "example server starting",
			EventLog:    filepath.Join(dir, "events"),
			TestTools:   true,
			CursorDelay: 400 * time.Millisecond,
		},
	}
}

// serverEnv is the environment entry that makes this test binary, run
// again, the example server with o.
func serverEnv(o example.Options) string {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return example.OptionsEnv + "=" + string(b)
}

// fakeWrapper is an npx-style wrapper: it runs the real server as a child
// sharing its stdio, and waits.
func fakeWrapper() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "FAKE_MCP=")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		os.Exit(1)
	}
	if p := os.Getenv("FAKE_PIDFILE"); p != "" {
		os.WriteFile(p, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	}
	signal.Ignore(syscall.SIGTERM) // like a wrapper that does not forward signals
	cmd.Wait()
}

// lineChan sends a copy of each JSON-RPC line read from r on the channel
// it returns (with room for buffer lines), closed at EOF or a read error.
func lineChan(r io.Reader, buffer int) <-chan []byte {
	lines := make(chan []byte, buffer)
	go func() {
		defer close(lines)
		jr := jsonrpc.NewReader(r)
		for {
			l, err := jr.Next()
			if err != nil {
				return
			}
			lines <- bytes.Clone(l)
		}
	}()
	return lines
}

// stdinMessages are the messages a fake server reads on its stdin, each
// line with what jsonrpc.Peek makes of it, until EOF. A line that is not
// JSON-RPC ends the fake with exit status 9.
func stdinMessages() iter.Seq2[[]byte, jsonrpc.Msg] {
	return func(yield func([]byte, jsonrpc.Msg) bool) {
		r := jsonrpc.NewReader(os.Stdin)
		for {
			line, err := r.Next()
			if err != nil {
				return
			}
			m, err := jsonrpc.Peek(line)
			if err != nil {
				os.Exit(9)
			}
			if !yield(line, m) {
				return
			}
		}
	}
}
