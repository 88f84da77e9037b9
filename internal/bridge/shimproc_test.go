//go:build unix

package bridge

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// shimProc is the real binary, `mcp-heal shim --url`, driven over its
// stdin/stdout the way Claude Code drives it.
type shimProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex
	next   atomic.Int64
	stderr *lockedBuffer
	// StateDir is the shim's XDG_STATE_HOME.
	StateDir string

	mu      sync.Mutex
	waiters map[string]chan []byte
	eof     chan struct{}
	// notes gets the notifications the shim writes (the first 256 not
	// yet read; later ones are dropped).
	notes chan []byte
}

type lockedBuffer = testenv.LockedBuffer

// startShim runs mcp-heal shim with args and a private state directory.
func startShim(t testing.TB, args ...string) *shimProc {
	t.Helper()
	return startShimEnv(t, nil, args...)
}

// startShimEnv is startShim with extra environment.
func startShimEnv(t testing.TB, env []string, args ...string) *shimProc {
	t.Helper()
	bin := testenv.Binary(t)
	cmd := exec.Command(bin, append([]string{"shim"}, args...)...)
	stateDir := t.TempDir()
	cmd.Env = append(append(os.Environ(), "XDG_STATE_HOME="+stateDir, "MCP_HEAL_DEBUG=1"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s := &shimProc{t: t, cmd: cmd, waiters: map[string]chan []byte{}, eof: make(chan struct{}), notes: make(chan []byte, 256), stderr: &lockedBuffer{}, StateDir: stateDir}
	cmd.Stderr = s.stderr
	in, out := testenv.StartPiped(t, cmd)
	s.stdin = in
	go s.read(out)
	t.Cleanup(func() {
		s.stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() || os.Getenv("BRIDGE_TEST_SHIM_LOG") != "" {
			t.Logf("shim stderr:\n%s", testenv.LastLines(s.stderr.String(), 60))
		}
	})
	return s
}

func (s *shimProc) read(out io.Reader) {
	defer close(s.eof)
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			s.route(line[:len(line)-1])
		}
		if err != nil {
			return
		}
	}
}

func (s *shimProc) route(line []byte) {
	m, err := jsonrpc.Peek(line)
	if err != nil {
		s.t.Errorf("shim wrote a line that is not JSON-RPC: %q", line)
		return
	}
	switch m.Kind {
	case jsonrpc.KindRequest:
		switch m.Method {
		case "roots/list":
			s.write(jsonrpc.ResultReply(m.ID, []byte(`{"roots":[]}`)))
		case "ping":
			s.write(jsonrpc.ResultReply(m.ID, []byte(`{}`)))
		default:
			s.write(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeMethodNotFound, "not supported by the test client", nil))
		}
	case jsonrpc.KindNotification:
		select {
		case s.notes <- append([]byte(nil), line...):
		default:
		}
	case jsonrpc.KindResponse:
		s.mu.Lock()
		ch := s.waiters[string(m.ID)]
		delete(s.waiters, string(m.ID))
		s.mu.Unlock()
		if ch == nil {
			s.t.Errorf("response nobody waits for: %s", line)
			return
		}
		ch <- append([]byte(nil), line...)
	}
}

func (s *shimProc) write(line []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.stdin.Write(append(line, '\n'))
}

// call sends a request and waits up to timeout for its response line.
func (s *shimProc) call(method, params string, timeout time.Duration) ([]byte, error) {
	id := fmt.Appendf(nil, "%d", s.next.Add(1))
	ch := make(chan []byte, 1)
	s.mu.Lock()
	s.waiters[string(id)] = ch
	s.mu.Unlock()
	var p []byte
	if params != "" {
		p = []byte(params)
	}
	s.write(jsonrpc.NewRequest(id, method, p))
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-s.eof:
		return nil, fmt.Errorf("%s: the shim closed its stdout", method)
	case <-t.C:
		return nil, fmt.Errorf("%s: no response in %s", method, timeout)
	}
}

// ok is call, failing unless the response is a result.
func (s *shimProc) ok(method, params string, timeout time.Duration) ([]byte, error) {
	r, err := s.call(method, params, timeout)
	if err != nil {
		return nil, err
	}
	if e := gjson.GetBytes(r, "error"); e.Exists() {
		return r, fmt.Errorf("%s: error response %s", method, e.Raw)
	}
	return r, nil
}

func (s *shimProc) initialize() {
	s.t.Helper()
	if _, err := s.ok("initialize", initParams, 30*time.Second); err != nil {
		s.t.Fatal(err)
	}
	s.write([]byte(initialized))
	// As Claude Code does: the shim learns the tools' annotations here
	// (readOnlyHint makes a call that was in flight when a server died
	// safe to re-send).
	if _, err := s.ok("tools/list", "", 30*time.Second); err != nil {
		s.t.Fatal(err)
	}
}

// echo calls tool with {arg: text} and checks the text came back (want,
// when set, is the text to expect instead).
func (s *shimProc) echo(tl tool, text string, timeout time.Duration) error {
	r, err := s.ok("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{%q:%q}}`, tl.name, tl.arg, text), timeout)
	if err != nil {
		return err
	}
	want := text
	if tl.want != "" {
		want = tl.want
	}
	if got := gjson.GetBytes(r, "result.content.0.text").Str; !strings.Contains(got, want) {
		return fmt.Errorf("tools/call %s: got %q, want it to contain %q", tl.name, got, want)
	}
	return nil
}
