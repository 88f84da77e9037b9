//go:build unix

package keep_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// client drives one `mcp-heal shim --keep` process.
type client struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	id    int
}

type env struct {
	bin, state, runtime string
}

func newEnv(t *testing.T) *env {
	rt := testenv.RuntimeDir(t)
	e := &env{bin: testenv.Binary(t), state: t.TempDir(), runtime: rt}
	t.Cleanup(func() {
		// Runs after every shim of the test was killed (cleanups run last
		// registered first), and before rt is removed: a kept server the
		// test left must not wait out its window. Each guardian's socket
		// is in e.runtime.
		socks, _ := filepath.Glob(filepath.Join(rt, "mcp-heal", "*.sock"))
		for _, s := range socks {
			_ = keep.Stop(s)
		}
	})
	return e
}

// newKept is a test's environment with its first shim, kept for a
// minute (--keep 1m), through the handshake.
func newKept(t *testing.T) (*env, *client) {
	t.Helper()
	e := newEnv(t)
	a := e.shim(t, "1m")
	a.handshake()
	return e, a
}

func (e *env) shim(t *testing.T, window string, extra ...string) *client {
	t.Helper()
	return e.shimOf(t, window, append([]string{e.bin, "example-server"}, extra...)...)
}

// shimOf runs `mcp-heal shim --keep window` for the server command.
func (e *env) shimOf(t *testing.T, window string, server ...string) *client {
	t.Helper()
	return e.shimAt(t, session{}, window, server...)
}

// session is where a shim runs: the working directory Claude Code starts
// it in ("": the test's), the environment it adds, and the shim flags
// before "--" (after --keep and --name).
type session struct {
	dir   string
	env   []string
	flags []string
}

// shimAt runs `mcp-heal shim --keep window` for the server command, in s.
func (e *env) shimAt(t *testing.T, s session, window string, server ...string) *client {
	t.Helper()
	args := append(append([]string{"shim", "--keep", window, "--name", "kept"}, s.flags...), "--")
	cmd := exec.Command(e.bin, append(args, server...)...)
	cmd.Dir = s.dir
	cmd.Env = append(append(os.Environ(), "XDG_STATE_HOME="+e.state, "XDG_RUNTIME_DIR="+e.runtime, "CLAUDE_CODE_SESSION_ID="+strconv.Itoa(time.Now().Nanosecond())), s.env...)
	cmd.Stderr = os.Stderr
	in, out := testenv.StartPiped(t, cmd)
	c := &client{t: t, cmd: cmd, in: in, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return c
}

func (c *client) send(s string) { fmt.Fprintln(c.in, s) }

// call sends a request and returns its response (other lines are
// returned in notes).
func (c *client) call(method, params string) (gjson.Result, []string) {
	c.t.Helper()
	c.id++
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.id, method, params))
	var notes []string
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("%s: the shim closed its stdout", method)
			}
			r := gjson.Parse(l)
			if r.Get("id").Raw == strconv.Itoa(c.id) {
				return r, notes
			}
			notes = append(notes, l)
		case <-deadline:
			c.t.Fatalf("%s: no answer in 20s", method)
		}
	}
}

const initParams = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`

func (c *client) handshake() gjson.Result {
	c.t.Helper()
	r, _ := c.call("initialize", initParams)
	if !r.Get("result.protocolVersion").Exists() {
		c.t.Fatalf("initialize: %s", r.Raw)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (c *client) tool(name, args string) string {
	c.t.Helper()
	r, _ := c.call("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
	if !r.Get("result").Exists() {
		c.t.Fatalf("%s: %s", name, r.Raw)
	}
	return r.Get("result.content.0.text").String()
}

// reattached takes c through the handshake and fails the test unless it
// re-attached to the kept server pid with its state: the counter
// (counter_increment) then at want. when says after what.
func (c *client) reattached(pid int, want, when string) {
	c.t.Helper()
	c.handshake()
	if got := int(c.info().Get("pid").Int()); got != pid {
		c.t.Fatalf("%s: re-attached to pid %d, want the kept %d", when, got, pid)
	}
	if got := c.tool("counter_increment", `{}`); got != want {
		c.t.Errorf("%s: counter %q, want %s (state kept)", when, got, want)
	}
}

// info is the server's session_info: pid, initialize count, ...
func (c *client) info() gjson.Result { return gjson.Parse(c.tool("session_info", `{}`)) }

func (c *client) kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.cmd.Wait()
}

// keptRecord waits for the detached guardian's state record.
func (e *env) keptRecord(t *testing.T) map[string]any {
	t.Helper()
	m := e.record(10*time.Second, func(m map[string]any) bool {
		return m["kept"] == true && m["attached"] != true && m["detached_since"] != nil
	})
	if m == nil {
		t.Fatal("no record of the detached kept server")
	}
	return m
}

// record waits up to within for a state record that match accepts; nil
// when none did.
func (e *env) record(within time.Duration, match func(map[string]any) bool) map[string]any {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(e.state, "mcp-heal", "shims", "*.json"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			var m map[string]any
			if json.Unmarshal(b, &m) == nil && match(m) {
				return m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// TestReattach: the shim SIGKILLed, a new shim for the same server finds
// the same process with the same state; the new client's initialize is
// answered without the server seeing a second one; stop ends it all.
func TestReattach(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.shim(t, "1m")
	initA := a.handshake()
	for i := 0; i < 3; i++ {
		a.tool("counter_increment", `{}`)
	}
	infoA := a.info()
	pid := int(infoA.Get("pid").Int())
	g := testenv.ParentPID(pid)
	a.kill()
	rec := e.keptRecord(t)
	if int(rec["child_pid"].(float64)) != pid || rec["expires"] == nil || rec["detached_since"] == nil {
		t.Errorf("detached record: %v", rec)
	}
	if !testenv.Alive(pid) {
		t.Fatal("the kept server died with its shim")
	}
	if out := e.run(t, "status"); !strings.Contains(out, "kept, detached: server pid "+strconv.Itoa(pid)) {
		t.Errorf("status does not show the detached kept server:\n%s", out)
	}

	b := e.shim(t, "1m")
	initB := b.handshake()
	if initB.Get("result").Raw != initA.Get("result").Raw {
		t.Errorf("initialize answered differently on re-attach:\n%s\n%s", initA.Get("result").Raw, initB.Get("result").Raw)
	}
	infoB := b.info()
	if got := int(infoB.Get("pid").Int()); got != pid {
		t.Fatalf("re-attached to pid %d, want the kept %d", got, pid)
	}
	if n := infoB.Get("initializes").Int(); n != 1 {
		t.Errorf("the kept server saw %d initialize requests, want 1", n)
	}
	if got := b.tool("counter_increment", `{}`); got != "4" {
		t.Errorf("counter after re-attach: %q, want 4 (state kept)", got)
	}

	b.kill()
	e.keptRecord(t)
	e.stop(t)
	testenv.WaitGone(t, "after mcp-heal stop", 10*time.Second, pid, g)
}

// TestWindowExpires: nobody re-attaches within the window: the server and
// its guardian are gone after it, and nothing is left behind.
func TestWindowExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.shim(t, "1s")
	a.handshake()
	pid := int(a.info().Get("pid").Int())
	g := testenv.ParentPID(pid)
	a.kill()
	time.Sleep(300 * time.Millisecond)
	if !testenv.Alive(pid) {
		t.Fatal("the kept server died with its shim")
	}
	testenv.WaitGone(t, "after the window", 10*time.Second, pid, g)
	socks, _ := filepath.Glob(filepath.Join(e.runtime, "mcp-heal", "*.sock"))
	if len(socks) != 0 {
		t.Errorf("sockets left: %v", socks)
	}
}

// TestSecondClientGetsItsOwn: while one shim is attached, a second one for
// the same server gets a server of its own; neither sees the other's
// answers.
func TestSecondClientGetsItsOwn(t *testing.T) {
	t.Parallel()
	e, a := newKept(t)
	b := e.shim(t, "1m")
	b.handshake()
	pa, pb := a.info().Get("pid").Int(), b.info().Get("pid").Int()
	if pa == pb {
		t.Fatalf("two clients share server %d", pa)
	}
	for i := 0; i < 20; i++ {
		if got := a.tool("echo", `{"text":"a`+strconv.Itoa(i)+`"}`); got != "a"+strconv.Itoa(i) {
			t.Errorf("a got %q", got)
		}
		if got := b.tool("echo", `{"text":"b`+strconv.Itoa(i)+`"}`); got != "b"+strconv.Itoa(i) {
			t.Errorf("b got %q", got)
		}
	}
	// Stopped while attached: a's session goes on with a server of its
	// own, not kept, so nothing outlives it.
	e.stop(t)
	if got := a.tool("echo", `{"text":"after stop"}`); got != "after stop" {
		t.Errorf("a after stop: %q", got)
	}
	pa2 := a.info().Get("pid").Int()
	g := testenv.ParentPID(int(pa2))
	a.kill()
	b.kill()
	testenv.WaitGone(t, "after stop and the end of both sessions", 10*time.Second, int(pa), int(pb), int(pa2), g)
}

func (e *env) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+e.state, "XDG_RUNTIME_DIR="+e.runtime, "HOME="+e.state, "CLAUDE_CODE_SESSION_ID=")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestConfigChangeNotKept: a changed config entry (here, its arguments)
// is a new identity: the new shim does not re-attach to the old server,
// and the old kept server is stopped rather than kept; doctor says why.
func TestConfigChangeNotKept(t *testing.T) {
	e, a := newKept(t)
	old := int(a.info().Get("pid").Int())
	oldG := testenv.ParentPID(old)
	a.kill()
	e.keptRecord(t)
	b := e.shim(t, "1m", "--name", "changed")
	b.handshake()
	if got := int(b.info().Get("pid").Int()); got == old {
		t.Fatalf("re-attached to the server of the old configuration")
	}
	testenv.WaitGone(t, "the kept server of the old configuration", 10*time.Second, old, oldG)
	testenv.UseStateDir(t, e.state)
	if why := keep.Explain("kept"); !strings.Contains(why, "configuration changed") {
		t.Errorf("Explain: %q", why)
	}
	e.stop(t)
}

func (e *env) stop(t *testing.T) {
	t.Helper()
	// The records are written asynchronously (a shim that just attached
	// may not have written its record yet, and the killed one's is pruned
	// as dead): until one names the kept server, `stop` finds none, so it
	// is tried again until the deadline.
	deadline := time.Now().Add(10 * time.Second)
	for {
		cmd := exec.Command(e.bin, "stop", "kept")
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+e.state, "XDG_RUNTIME_DIR="+e.runtime)
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		if strings.Contains(string(out), "no kept server named") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		t.Errorf("mcp-heal stop kept: %v\n%s", err, out)
		files, _ := filepath.Glob(filepath.Join(e.state, "mcp-heal", "shims", "*.json"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			t.Logf("%s: %s", f, b)
		}
		return
	}
}

// TestDeadShimsResponsesDropped: a call of the killed shim finishes after
// a new shim attached and reused its id; the new client gets only its own
// answer, never the dead one's.
func TestDeadShimsResponsesDropped(t *testing.T) {
	t.Parallel()
	e, a := newKept(t)
	pid := a.info().Get("pid").Int()
	a.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"ms":800}}}`)
	time.Sleep(100 * time.Millisecond)
	a.kill()
	b := e.shim(t, "1m")
	b.handshake()
	b.id = 6 // the next call reuses the dead shim's id 7
	r, notes := b.call("tools/call", `{"name":"slow","arguments":{"ms":1500}}`)
	if got := r.Get("result.content.0.text").String(); got != "waited 1500 ms" {
		t.Errorf("b's call 7 got %q (%s), want its own answer", got, r.Raw)
	}
	for _, n := range notes {
		if gjson.Get(n, "id").Exists() {
			t.Errorf("b got a message with an id it did not expect: %s", n)
		}
	}
	if got := b.info().Get("pid").Int(); got != pid {
		t.Errorf("not re-attached: pid %d, want %d", got, pid)
	}
	e.stop(t)
}

// TestVersionChangeRestarts: a client asking for another protocol version
// than the kept server negotiated gets a fresh server (the log says why).
func TestVersionChangeRestarts(t *testing.T) {
	t.Parallel()
	e, a := newKept(t)
	pid := a.info().Get("pid").Int()
	a.kill()
	e.keptRecord(t)
	b := e.shim(t, "1m")
	r, _ := b.call("initialize", strings.Replace(initParams, "2025-06-18", "2025-03-26", 1))
	if v := r.Get("result.protocolVersion").String(); v != "2025-03-26" {
		t.Fatalf("initialize after a version change: %s", r.Raw)
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	info := b.info()
	if info.Get("pid").Int() == pid || info.Get("initializes").Int() != 1 {
		t.Errorf("after a version change: %s, want a fresh server (old pid %d)", info.Raw, pid)
	}
	testenv.WaitGone(t, "the server of the old version", 10*time.Second, int(pid))
	e.stop(t)
}

// TestSIGTERMAndEOFKeep: Claude Code ends its stdio servers with SIGTERM
// (and closes their stdin); a kept server outlives both, and the shim
// exits at once instead of running the stop ladder.
func TestSIGTERMAndEOFKeep(t *testing.T) {
	t.Parallel()
	e, a := newKept(t)
	a.tool("counter_increment", `{}`)
	pid := a.info().Get("pid").Int()
	start := time.Now()
	a.cmd.Process.Signal(syscall.SIGTERM)
	a.cmd.Wait()
	if d := time.Since(start); d > time.Second {
		t.Errorf("the shim took %v to exit on SIGTERM", d)
	}
	b := e.shim(t, "1m")
	b.reattached(int(pid), "2", "after SIGTERM")
	b.in.Close() // stdin EOF
	b.cmd.Wait()
	c := e.shim(t, "1m")
	c.reattached(int(pid), "3", "after stdin EOF")
	e.stop(t)
	testenv.WaitGone(t, "after stop", 10*time.Second, int(pid))
}

// TestKeptServerCrashRespawns: a kept server that crashes mid-session is
// respawned under the same guardian (the shim's healing holds), and the
// next session re-attaches to the new one.
func TestKeptServerCrashRespawns(t *testing.T) {
	t.Parallel()
	e, a := newKept(t)
	pid := a.info().Get("pid").Int()
	g := testenv.ParentPID(int(pid))
	r, _ := a.call("tools/call", `{"name":"crash","arguments":{}}`)
	if !r.Get("error").Exists() && !r.Get("result.isError").Bool() {
		t.Errorf("crash call: %s", r.Raw)
	}
	pid2 := a.info().Get("pid").Int()
	if pid2 == pid || testenv.ParentPID(int(pid2)) != g {
		t.Fatalf("after a crash: pid %d (parent %d), want a new server under guardian %d", pid2, testenv.ParentPID(int(pid2)), g)
	}
	a.kill()
	b := e.shim(t, "1m")
	b.handshake()
	if got := b.info().Get("pid").Int(); got != pid2 {
		t.Errorf("re-attached to %d, want the respawned %d", got, pid2)
	}
	e.stop(t)
}

// runIn runs the mcp-heal binary in e's state and runtime dirs, with home as
// HOME and the working directory (the project).
func (e *env) runIn(t *testing.T, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+e.state, "XDG_RUNTIME_DIR="+e.runtime,
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "CLAUDE_PROJECT_DIR="+home, "CLAUDE_CODE_SESSION_ID=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcp-heal %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestUnwrapStopsKeptServers is issue 18 item 5: `unwrap --all` (the first
// step of the documented uninstall) stops the kept servers of the servers
// it gives back; before, a kept server ran on after unwrap, after `/plugin
// uninstall` and the documented rm -rf, its guardian running a deleted
// binary. `stop --all` stops any other.
func TestUnwrapStopsKeptServers(t *testing.T) {
	e := newEnv(t)
	home := t.TempDir()
	cfg := fmt.Sprintf(`{"mcpServers":{"kept":{"command":%q,"args":["example-server"]}}}`, e.bin)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.runIn(t, home, "wrap", "--all", "--keep", "1m", "--shim", e.bin)
	// What Claude Code starts from the wrapped entry, then lets go of.
	a := e.shim(t, "1m")
	a.handshake()
	server := int(a.info().Get("pid").Int())
	guardian := testenv.ParentPID(server)
	a.kill()
	e.keptRecord(t)
	if !testenv.Alive(server) {
		t.Fatal("the kept server did not outlive its shim")
	}

	out := e.runIn(t, home, "unwrap", "--all")
	if !strings.Contains(out, fmt.Sprintf("kept: stopped its kept server (pid %d)", server)) {
		t.Errorf("unwrap --all output lacks the kept server it stopped:\n%s", out)
	}
	testenv.WaitGone(t, "the kept server after unwrap --all", 10*time.Second, server, guardian)

	// stop --all: every kept server, whatever its name.
	b := e.shim(t, "1m")
	b.handshake()
	server = int(b.info().Get("pid").Int())
	guardian = testenv.ParentPID(server)
	b.kill()
	e.keptRecord(t)
	if out := e.runIn(t, home, "stop", "--all"); !strings.Contains(out, fmt.Sprintf("stopped a kept server (pid %d)", server)) {
		t.Errorf("stop --all: %q", out)
	}
	testenv.WaitGone(t, "the kept server after stop --all", 10*time.Second, server, guardian)
	if out := e.runIn(t, home, "stop", "--all"); !strings.Contains(out, "no kept server is running") {
		t.Errorf("stop --all with none left: %q", out)
	}
}
