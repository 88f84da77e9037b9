//go:build unix

package shim

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestBinarySignals drives the real `mcp-heal shim` binary: the state
// record on disk, SIGHUP restarting the child, SIGTERM stopping everything
// (an npx-style wrapper and its server included) and removing the record.
func TestBinarySignals(t *testing.T) {
	bin := testenv.Binary(t)
	stateHome := t.TempDir()
	pidfile := filepath.Join(t.TempDir(), "server.pid")
	cmd := exec.Command(bin, "shim", "--name", "bin-fake", "--", os.Args[0])
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "FAKE_MCP=wrapper", "FAKE_PIDFILE="+pidfile, serverEnv(example.Options{Era: example.EraHandshake}), "XDG_STATE_HOME="+stateHome, "CLAUDE_CODE_SESSION_ID=s-42", "MCP_HEAL_DEBUG=1")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdin, stdout := testenv.StartPiped(t, cmd)
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	call := func(id, method, params string) gjson.Result {
		t.Helper()
		stdin.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + "}\n"))
		select {
		case l := <-lines:
			return gjson.Parse(l)
		case <-time.After(20 * time.Second):
			t.Fatalf("no answer to %s; stderr:\n%s", method, stderr.String())
			return gjson.Result{}
		}
	}
	if r := call("1", "initialize", initParams); !r.Get("result").Exists() {
		t.Fatalf("initialize: %s", r.Raw)
	}
	stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))

	testenv.UseStateDir(t, stateHome)
	rec := func(cond func(r *state.Record) bool) *state.Record {
		t.Helper()
		var r *state.Record
		testenv.WaitFor(t, 10*time.Second, "the state record", func() bool {
			var err error
			r, err = state.Read(cmd.Process.Pid)
			return err == nil && cond(r)
		})
		return r
	}
	r := rec(func(r *state.Record) bool { return r.State == state.Running && r.Era == EraHandshake })
	if r.Server != "bin-fake" || r.Session != "s-42" || r.ClaudePID != os.Getpid() {
		t.Errorf("record: %+v", r)
	}
	first := r.ChildPID
	server1 := readPID(t, pidfile)

	cmd.Process.Signal(syscall.SIGHUP)
	r = rec(func(r *state.Record) bool { return r.ChildPID != first && r.ChildPID != 0 && r.State == state.Running })
	if r.Restarts != 1 {
		t.Errorf("restarts after SIGHUP: %d", r.Restarts)
	}
	if r := call("2", "ping", "{}"); !r.Get("result").Exists() {
		t.Errorf("ping after SIGHUP: %s", r.Raw)
	}
	testenv.WaitFor(t, 5*time.Second, "the first server to be gone", func() bool { return !testenv.Alive(server1) })
	server2 := readPID(t, pidfile)

	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("shim exit after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
	t.Logf("shim stopped %v after SIGTERM; stderr:\n%s", time.Since(start), stderr.String())
	if testenv.Alive(server2) || testenv.Alive(r.ChildPID) {
		t.Errorf("orphans after SIGTERM: server alive=%v wrapper alive=%v", testenv.Alive(server2), testenv.Alive(r.ChildPID))
	}
	if _, err := state.Read(cmd.Process.Pid); !os.IsNotExist(err) {
		t.Errorf("state record left behind: %v", err)
	}
	life, _ := os.ReadFile(state.LogPath("bin-fake"))
	for _, want := range []string{`"event":"signal"`, `"signal":"hangup"`, `"signal":"terminated"`, `"purpose":"SIGHUP"`, `"event":"shim-exit"`} {
		if !strings.Contains(string(life), want) {
			t.Errorf("lifecycle log lacks %s:\n%s", want, life)
		}
	}
}

// A shim killed with -9 cannot run its stop ladder: the kernel's
// parent-death signal still takes its child (one that ignores stdin EOF)
// down with it.
func TestBinaryKilledTakesChild(t *testing.T) {
	bin := testenv.Binary(t)
	stateHome := t.TempDir()
	cmd := exec.Command(bin, "shim", "--name", "orphan", "--", os.Args[0])
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", serverEnv(example.Options{Era: example.EraHandshake, Faults: example.Faults{Stubborn: true}}), "XDG_STATE_HOME="+stateHome)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.UseStateDir(t, stateHome)
	var child int
	testenv.WaitFor(t, 10*time.Second, "the child in the state record", func() bool {
		r, err := state.Read(cmd.Process.Pid)
		if err == nil {
			child = r.ChildPID
		}
		return child > 0
	})
	cmd.Process.Kill()
	cmd.Wait()
	testenv.WaitFor(t, 5*time.Second, "the child to die with the shim", func() bool { return !testenv.Alive(child) })
}

// Issue 9 defect 6 through the real binary: SIGINT (what Claude Code sends
// at session end) while a restarted server has not answered the replayed
// initialize stops the shim within the stop ladder, not after the replay's
// 30s timeout.
func TestBinarySIGINTDuringReplay(t *testing.T) {
	bin := testenv.Binary(t)
	events := filepath.Join(t.TempDir(), "events")
	cmd := exec.Command(bin, "shim", "--name", "bin-replay", "--", os.Args[0])
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "XDG_STATE_HOME="+t.TempDir(),
		serverEnv(example.Options{Era: example.EraHandshake, FailFile: events + ".n", Faults: example.Faults{MuteInitAfter: 1, EventLog: events}}))
	stdin, stdout := testenv.StartPiped(t, cmd)
	defer cmd.Process.Kill()
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + "}\n"))
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	count := func(s string) int {
		b, _ := os.ReadFile(events)
		return strings.Count(string(b), s)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	testenv.WaitFor(t, 10*time.Second, "the replayed initialize to reach the new server", func() bool { return count(" muted") == 1 })
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the shim did not exit within 20s of SIGINT")
	}
	d := time.Since(start)
	t.Logf("exited %v after SIGINT", d)
	if d > 6*time.Second {
		t.Errorf("the shim took %v to exit after SIGINT, want the stop ladder", d)
	}
}
