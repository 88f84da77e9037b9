//go:build unix

package shim

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

func (h *harness) phase() string {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.phase
}

// Rule 5: crash loop -> backoff -> failed (clear errors) -> recovers by
// itself when the command works again. The backoff runs on a fake clock:
// the test fires each delay as the supervisor sets it.
func TestCrashLoopFailsThenRecovers(t *testing.T) {
	h := newHarness(t, hopt{
		fakeClock: true,
		server: func(o *example.Options, dir string) {
			o.Faults.FailWhile = filepath.Join(dir, "fail")
			o.Faults.StartStderr = "fatal: cannot open database (api_key=hunter2secret)"
		},
		opts: func(o *Options) {
			o.MaxFailures = 3
			o.BackoffMin = 20 * time.Millisecond
			o.BackoffMax = 150 * time.Millisecond
		},
	})
	h.handshake()
	old := h.waitUp(0)
	if err := os.WriteFile(h.path("fail"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.killChild()
	h.advanceUntil("failed state", func() bool { return h.phase() == state.Failed })
	// Quick failures in a row: respawned at once, then after delays that
	// double (jittered down by at most a quarter) up to the cap.
	// It keeps being restarted, and stays failed (calls are answered at
	// once) while each attempt is under way.
	h.advanceUntil("five backoff delays", func() bool { return len(h.advanced) >= 5 })
	if h.phase() != state.Failed {
		t.Errorf("phase while still crash-looping: %s", h.phase())
	}
	for i, d := range h.advanced {
		want := min(20*time.Millisecond<<i, 150*time.Millisecond)
		if d > want || d < want*3/4 {
			t.Errorf("backoff delay %d: %v, want %v less at most a quarter (all: %v)", i+1, d, want, h.advanced)
		}
	}

	start := time.Now()
	r := h.tool("echo", `{"text":"x"}`)
	if d := time.Since(start); d > time.Second {
		t.Errorf("a call to a failed server took %v to be answered", d)
	}
	msg := r.Get("error.message").String()
	for _, want := range []string{`MCP server "fake" is failing (crash loop): the server process exited with code 1; its last run lasted `, "cannot open database", "[REDACTED]", "; this call was not sent."} {
		if !strings.Contains(msg, want) {
			t.Errorf("failed-state error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(r.Raw, "hunter2secret") {
		t.Errorf("secret from stderr leaked: %s", r.Raw)
	}
	if r.Get("error.data.reason").String() != "server-failed" || r.Get("error.data.exit.code").Int() != 1 {
		t.Errorf("data: %s", r.Get("error.data").Raw)
	}
	if r := h.call("ping", ""); !r.Get("result").Exists() {
		t.Errorf("ping while failed: %s", r.Raw)
	}

	// The command works again: the shim notices by itself.
	os.Remove(h.path("fail"))
	h.advanceUntil("recovered server", func() bool { pid := h.childPID(); return pid != 0 && pid != old })
	testenv.WaitFor(t, 10*time.Second, "recovery", func() bool {
		return h.tool("echo", `{"text":"back"}`).Get("result.content.0.text").String() == "back"
	})
	if h.phase() != state.Running {
		t.Errorf("phase after recovery: %s", h.phase())
	}
	// The handshake was replayed on the recovered server.
	if n := h.countEvents("initialize "); n < 2 {
		t.Errorf("initialize seen %d times", n)
	}
}

func TestHangDetection(t *testing.T) {
	for _, era := range []string{"handshake", "stateless"} {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, hopt{
				fakeClock: true,
				server:    func(o *example.Options, _ string) { o.Era = era },
				opts:      func(o *Options) { o.HangAfter = time.Minute; o.PingTimeout = 10 * time.Second },
			})
			h.handshake()
			old := h.waitUp(0)
			start := time.Now()
			_, hang := h.start("tools/call", `{"name":"hang"}`)
			h.waitCalls("hang", 1)
			// Sent after the server stopped reading: re-sent to the new one.
			_, echo := h.start("tools/call", `{"name":"echo","arguments":{"text":"after"}}`)
			// The user's deadline (a minute) with the probe, sent at 3 s,
			// unanswered.
			h.silenceUntilKilled(time.Minute + 20*time.Second)
			r := h.wait(hang, "hang")
			took := time.Since(start)
			if r.Get("error.code").Int() != -32603 {
				t.Fatalf("hung call: got %s", r.Raw)
			}
			if r.Get("error.data.reason").String() != "not-retried" || !strings.Contains(r.Get("error.message").String(), "is restarting: while this call was running, the server process hung, so mcp-heal stopped it (tools/call was outstanding for 1m") {
				t.Errorf("hung call: got %s", r.Raw)
			}
			if took > 10*time.Second {
				t.Errorf("hang resolved in %v", took)
			}
			if r := h.wait(echo, "echo"); r.Get("result.content.0.text").String() != "after" {
				t.Errorf("call queued behind the hang: got %s", r.Raw)
			}
			if h.waitUp(old) == old {
				t.Error("not restarted")
			}
		})
	}
}

// Idle health probes: pings in the handshake era; the stateless era has no
// ping, so there the probe is server/discover and no ping is ever sent.
func TestIdlePing(t *testing.T) {
	for _, era := range []string{"handshake", "stateless"} {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, hopt{server: func(o *example.Options, _ string) { o.Era = era }, opts: func(o *Options) { o.PingInterval = 50 * time.Millisecond }})
			h.handshake()
			probe := "ping"
			if era == "stateless" {
				probe = "discover"
			}
			testenv.WaitFor(t, 5*time.Second, "idle probes", func() bool { return h.countEvents(probe) >= 4 })
			if era == "stateless" && h.countEvents("ping") != 0 {
				t.Errorf("a stateless server got %d pings", h.countEvents("ping"))
			}
			select {
			case b := <-h.other:
				t.Errorf("a probe answer reached the client: %s", b)
			default:
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.dups) > 0 || len(h.answered) != map[string]int{"handshake": 3, "stateless": 2}[era] {
				t.Errorf("client got answers for %v, want only its own requests", h.answered)
			}
		})
	}
}

// Rule 7: shutdown closes stdin, then SIGTERMs the group, then SIGKILLs;
// no orphans, no respawn.
func TestShutdown(t *testing.T) {
	t.Run("client EOF, no respawn", func(t *testing.T) {
		h := newHarness(t, hopt{})
		h.handshake()
		pid := h.waitUp(0)
		h.in.Close()
		select {
		case <-h.runDone:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after client EOF")
		}
		if testenv.Alive(pid) {
			t.Errorf("child %d still alive", pid)
		}
		if n := h.countEvents("start"); n != 1 {
			t.Errorf("server started %d times, want 1", n)
		}
		h.runDone <- nil
	})
	t.Run("stubborn child is SIGKILLed", func(t *testing.T) {
		h := newHarness(t, hopt{server: func(o *example.Options, _ string) { o.Faults.Stubborn = true }})
		h.handshake()
		pid := h.waitUp(0)
		start := time.Now()
		h.cancel() // SIGTERM to the shim
		h.in.Close()
		select {
		case <-h.runDone:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
		}
		// StopStep is 300ms in the harness: two steps, then SIGKILL.
		if d := time.Since(start); d < 600*time.Millisecond || d > 5*time.Second {
			t.Errorf("stop took %v, want two steps (600ms) then SIGKILL", d)
		}
		if testenv.Alive(pid) {
			t.Errorf("child %d still alive", pid)
		}
		h.runDone <- nil
	})
	t.Run("npx-style wrapper leaves no orphan", func(t *testing.T) {
		dir := t.TempDir()
		pidfile := dir + "/grandchild"
		h := newHarness(t, hopt{env: []string{"FAKE_MCP=wrapper", "FAKE_PIDFILE=" + pidfile}})
		h.handshake()
		gc := readPID(t, pidfile)
		// kill -9 of the wrapper alone: the server it ran goes too, and a
		// new wrapper+server answers.
		h.killChild()
		testenv.WaitFor(t, 5*time.Second, "the orphaned server to be killed", func() bool { return !testenv.Alive(gc) })
		if r := h.tool("echo", `{"text":"again"}`); r.Get("result.content.0.text").String() != "again" {
			t.Fatalf("after killing the wrapper: %s", r.Raw)
		}
		gc2 := readPID(t, pidfile)
		if gc2 == gc {
			t.Fatal("no new grandchild")
		}
		wrapper := h.waitUp(0)
		h.in.Close()
		<-h.runDone
		if testenv.Alive(gc2) || testenv.Alive(wrapper) {
			t.Errorf("after shutdown: wrapper alive=%v, server alive=%v", testenv.Alive(wrapper), testenv.Alive(gc2))
		}
		h.runDone <- nil
	})
}

// readPID waits (5 s at most) for the pid a fake server wrote to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	return testenv.ReadPIDs(t, path, 1, 5*time.Second)[0]
}

// SIGHUP (Restart) restarts the child on purpose.
func TestRestartOnPurpose(t *testing.T) {
	h := newHarness(t, hopt{})
	h.handshake()
	old := h.waitUp(0)
	_, slow := h.start("tools/call", `{"name":"slow","arguments":{"ms":300}}`)
	h.waitCalls("slow", 1)
	h.s.Restart("SIGHUP")
	if r := h.wait(slow, "slow"); r.Get("result.content.0.text").String() != "waited 300 ms" {
		t.Errorf("in-flight read across the restart: got %s", r.Raw)
	}
	if h.waitUp(old) == old || testenv.Alive(old) {
		t.Errorf("old child %d still alive or not replaced", old)
	}
	if h.phase() != state.Running {
		t.Errorf("phase: got %s, want running", h.phase())
	}
	_ = syscall.SIGHUP
}

// Issue 9 defect 6: SIGINT or stdin EOF while a respawned server has not
// answered the replayed initialize stops within the stop ladder, not after
// the replay's 30s timeout.
func TestShutdownDuringReplay(t *testing.T) {
	for _, how := range []string{"client EOF", "SIGINT"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, hopt{server: func(o *example.Options, _ string) { o.Faults.MuteInitAfter, o.Faults.Stubborn = 1, true }})
			h.handshake()
			old := h.killChild()
			testenv.WaitFor(t, 10*time.Second, "the replayed initialize to reach the new server", func() bool {
				return h.countEvents("initialize ") == 2
			})
			h.s.mu.Lock()
			pid := h.s.run.childPID
			h.s.mu.Unlock()
			if pid == 0 || pid == old {
				t.Fatalf("no new server (pid %d, old %d)", pid, old)
			}
			start := time.Now()
			if how == "SIGINT" {
				h.cancel() // what the shim's SIGINT handler does
			} else {
				h.in.Close()
			}
			select {
			case <-h.runDone:
			case <-time.After(20 * time.Second):
				t.Fatal("Run did not return within 20s")
			}
			// StopStep is 300ms in the harness, and the stubborn server
			// needs the whole ladder: two steps, then SIGKILL.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("stop took %v, want the stop ladder (about 600ms)", d)
			}
			if testenv.Alive(pid) {
				t.Errorf("server %d still alive", pid)
			}
			h.runDone <- nil
		})
	}
}
