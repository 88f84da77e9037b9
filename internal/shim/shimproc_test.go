package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestShimProcess runs the shim as a process of its own, its server as
// another, with nothing but pipes and process ids between them and the
// test: what Claude Code sees. It runs on unix and, cross-compiled, on
// Windows (under Wine in the full suite), so the server is the example
// server in this test binary re-executed (SHIM_TEST_ROLE=example), not a
// script. The shim is this test binary too (SHIM_TEST_ROLE=shim), run as
// `mcp-heal shim` runs it (RunWithSignals, a state record).
func init() {
	switch os.Getenv("SHIM_TEST_ROLE") {
	case "":
		return
	case "example":
		err := example.Run(context.Background(), example.Options{}, os.Stdin, os.Stdout, os.Stderr)
		var ee *example.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.Code)
		}
	case "shim":
		exe, _ := os.Executable()
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		s := New(Options{
			Name:   "shimproc",
			Dialer: &proc.Dialer{Config: proc.Config{Path: exe, Env: append(os.Environ(), "SHIM_TEST_ROLE=example"), Stderr: os.Stderr, Log: log}},
			Stdin:  os.Stdin, Stdout: os.Stdout, Log: log,
			// A hang is caught in seconds: the user's deadline.
			HangAfter: time.Second, PingTimeout: time.Second,
			Record: true,
		})
		if err := s.RunWithSignals(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

// shimClient is the test's side of a shim process: Claude Code's.
type shimClient struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func (c *shimClient) send(msg string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, msg+"\n"); err != nil {
		c.t.Fatalf("write to the shim: %v", err)
	}
}

// call sends a request and returns its response (nothing else comes from
// the example server unasked).
func (c *shimClient) call(method, params string) map[string]any {
	c.t.Helper()
	c.id++
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.id, method, params))
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("%s: read from the shim: %v", method, err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("%s: %q: %v", method, line, err)
		}
		if id, ok := m["id"].(float64); ok && int(id) == c.id {
			return m
		}
	}
}

// info calls session_info: the server's pid and what it negotiated; pid 0
// when the call failed.
func (c *shimClient) info() (pid int, version string, initialized bool) {
	c.t.Helper()
	m := c.call("tools/call", `{"name":"session_info","arguments":{}}`)
	if m["error"] != nil {
		return 0, "", false // a call that reached a server as it died
	}
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		c.t.Fatalf("session_info: %v", m)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	var si struct {
		PID             int
		ProtocolVersion string
		Initialized     bool
	}
	if err := json.Unmarshal([]byte(text), &si); err != nil {
		c.t.Fatalf("session_info %q: %v", text, err)
	}
	return si.PID, si.ProtocolVersion, si.Initialized
}

// infoFromNew calls session_info until a server other than old answers
// (the shim answers a call that reached the dying one with an error), and
// checks that the handshake was replayed to it.
func (c *shimClient) infoFromNew(old int, version, what string) int {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		pid, v, init := c.info()
		if pid != 0 && pid != old {
			if v != version || !init {
				c.t.Errorf("%s: server %d got version %q, initialized %v: the handshake (%s) was not replayed", what, pid, v, init, version)
			}
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("%s: server %d was never replaced", what, old)
	return 0
}

func TestShimProcess(t *testing.T) {
	dir := testenv.TempDir(t)
	t.Setenv("XDG_STATE_HOME", dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "SHIM_TEST_ROLE=shim")
	stderr, err := os.Create(dir + string(os.PathSeparator) + "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	in, out := testenv.StartPiped(t, cmd)
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(stderr.Name())
			t.Logf("shim stderr:\n%s", b)
		}
	}()
	// A shim that stops answering must fail the test, not hang it: the
	// reads below end when it is killed.
	watchdog := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	c := &shimClient{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}

	init := c.call("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"shimproc","version":"1"}}`)
	res, _ := init["result"].(map[string]any)
	version, _ := res["protocolVersion"].(string)
	if version != "2025-06-18" {
		t.Fatalf("initialize: %v", init)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.call("tools/list", `{}`)
	first, _, _ := c.info()
	if first == 0 {
		t.Fatal("no server pid")
	}

	// Killed from outside: a fresh server, the handshake replayed.
	p, err := os.FindProcess(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	p.Release()
	second := c.infoFromNew(first, version, "after the kill")
	t.Logf("server %d killed from outside: server %d runs, the handshake replayed", first, second)

	// Hung: the shim's ping goes unanswered, it kills and replaces it.
	if m := c.call("tools/call", `{"name":"hang","arguments":{}}`); m["error"] == nil && !isErrorResult(m) {
		t.Fatalf("the hang call was answered: %v", m)
	}
	third := c.infoFromNew(second, version, "after the hang")
	waitGoneProc(t, "the hung server", second)
	t.Logf("server %d hung: killed, server %d runs", second, third)

	// Healed: the record names this shim, and heal's nudge (SIGHUP on
	// unix, the heal event on Windows) restarts its server.
	var rec *state.Record
	testenv.WaitFor(t, 20*time.Second, "the shim's state record with its identity", func() bool {
		r, err := state.Read(cmd.Process.Pid)
		rec = r
		return err == nil && r.ShimStart != ""
	})
	if err := state.SignalShim(rec, syscall.SIGHUP, state.NudgeShim); err != nil {
		t.Fatalf("heal nudge: %v", err)
	}
	fourth := c.infoFromNew(third, version, "after the heal nudge")
	waitGoneProc(t, "the server before the nudge", third)
	t.Logf("heal nudge: server %d stopped, server %d runs", third, fourth)

	// The shim killed from outside takes its server along (Windows: the
	// job object; Linux: the parent-death signal; macOS has neither
	// without a guardian, which this shim does not run).
	if runtime.GOOS == "darwin" {
		return
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGoneProc(t, "the server of the killed shim", fourth)
	t.Logf("shim %d killed: server %d gone", cmd.Process.Pid, fourth)
}

func isErrorResult(m map[string]any) bool {
	res, _ := m["result"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	return isErr
}

// waitGoneProc waits (20 s at most) until pid is no live process.
func waitGoneProc(t *testing.T, what string, pid int) {
	t.Helper()
	testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("%s (pid %d) to end", what, pid), func() bool { return !procinfo.Alive(pid) })
}
