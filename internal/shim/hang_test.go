//go:build unix

package shim

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// defaults leaves the liveness settings to New, as `wrap` does (it writes
// no --hang-after, --ping-timeout or --ping-interval).
func defaults(o *Options) { o.HangAfter, o.Look, o.PingTimeout, o.PingInterval = 0, 0, 0, 0 }

// step fires the janitor's next tick on the fake clock and returns how far
// the clock moved. A probe the tick starts has set its time-out timer
// before step returns, so fake time never runs past a probe not yet timed.
func (h *harness) step() time.Duration {
	h.t.Helper()
	tick := h.s.janitorTick()
	h.advanceTimer(tick, "the janitor's tick")
	// The janitor is done with this tick once it set the next one.
	if _, ok := h.clk.WaitTimer(20*time.Second, func(d time.Duration) bool { return d == tick }); !ok {
		h.t.Fatal("the janitor set no next tick")
	}
	// Nor is that timer proof enough: on a loaded machine the clock ran
	// on while the janitor had not yet checked. Its checks at this very
	// time are.
	now := h.clk.Now()
	testenv.WaitFor(h.t, 20*time.Second, "the janitor's checks at this time", func() bool {
		h.s.mu.Lock()
		defer h.s.mu.Unlock()
		return !h.s.run.checked.Before(now)
	})
	testenv.WaitFor(h.t, 20*time.Second, "the probe's time-out timer", func() bool {
		return !h.probing() || slices.Contains(h.clk.Pending(), h.s.liveCfg.PingTimeout)
	})
	return tick
}

// kills counts the servers the shim killed as hung or stopped.
func (h *harness) kills() int { return strings.Count(h.logs.String(), "; killing it") }

func (h *harness) probing() bool {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.run.live.Probing()
}

// quiet is what the shim's record says of a server not answering.
func (h *harness) quiet() quiet {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.run.quiet
}

// stepFor runs the janitor for d of fake time and returns the elapsed time
// at the first kill (0: none).
func (h *harness) stepFor(d time.Duration) (killedAt time.Duration) {
	h.t.Helper()
	for elapsed := time.Duration(0); elapsed < d; {
		elapsed += h.step()
		if killedAt == 0 && h.kills() > 0 {
			killedAt = elapsed
		}
	}
	return killedAt
}

// stepAnswered runs the janitor for d of fake time, letting each probe be
// answered: the answer comes by real time, so it is let in before the
// clock moves on, and the probe's time-out is never what fires.
func (h *harness) stepAnswered(d time.Duration) {
	h.t.Helper()
	for elapsed := time.Duration(0); elapsed < d; {
		elapsed += h.step()
		testenv.WaitFor(h.t, 10*time.Second, "the probe to be answered", func() bool { return !h.probing() })
	}
}

// cancelSeen sends the client's cancel of call id (Claude Code's tool
// time-out) and waits, 5 s at most, until the shim has marked it
// cancelled.
func (h *harness) cancelSeen(id string) {
	h.t.Helper()
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"timeout"}}`)
	testenv.WaitFor(h.t, 5*time.Second, "the cancel to be seen", func() bool {
		h.s.mu.Lock()
		defer h.s.mu.Unlock()
		e := h.s.inflight[id]
		return e != nil && e.cancelled
	})
}

// busyCall is a harness on the fake clock whose server is working on a
// hang2 call (it answers pings meanwhile): the server's pid, the call's id
// and answer, and the pings the server had been sent by then.
func busyCall(t *testing.T) (h *harness, pid int, id string, call <-chan []byte, pings int) {
	t.Helper()
	h = newHarness(t, hopt{fakeClock: true, opts: defaults})
	h.handshake()
	pid = h.waitUp(0)
	id, call = h.start("tools/call", `{"name":"hang2"}`)
	h.waitCalls("hang2", 1)
	return h, pid, id, call, h.countEvents("ping")
}

// With the defaults `wrap` writes, silence alone never kills a server:
// neither one deaf to everything (the hang tool) nor a single-threaded one
// that answers its ping only after a long call (Serial, the gate tool). A
// minute and a half of fake time; the deaf one is published as not
// answering. On the old code both were killed at 13.75 s (hang-after 3 s +
// ping time-out 10 s + a tick).
func TestSilenceNeverKillsByDefault(t *testing.T) {
	for _, kind := range []string{"deaf", "single-threaded"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newGateHarness(t)
			h.handshake()
			pid := h.waitUp(0)
			tool := map[string]string{"deaf": "hang", "single-threaded": "gate"}[kind]
			_, call := h.start("tools/call", `{"name":"`+tool+`"}`)
			h.waitCalls(tool, 1)
			if at := h.stepFor(90 * time.Second); at > 0 {
				t.Fatalf("a %s server was killed %v into a silent call", kind, at)
			}
			if got := h.childPID(); got != pid {
				t.Fatalf("server %d replaced by %d", pid, got)
			}
			q := h.quiet()
			if q.since.IsZero() || q.method != "tools/call" || q.tool != tool {
				t.Errorf("not published as not answering: %+v", q)
			}
			if kind == "deaf" {
				return
			}
			if err := os.WriteFile(h.path("gate"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if r := h.wait(call, "the long call"); r.Get("result.content.0.text").String() != "through" {
				t.Errorf("the long call: %s", r.Raw)
			}
			h.step()
			if q := h.quiet(); !q.since.IsZero() {
				t.Errorf("still published as not answering after the answer: %+v", q)
			}
			if got := h.childPID(); got != pid {
				t.Errorf("server %d replaced by %d", pid, got)
			}
		})
	}
}

// With --kill-on-cancel (the user's consent), the client cancelled the
// call (Claude Code's tool timeout, the user's Esc) and the server then
// stays deaf to a ping: it is killed PingTimeout after the cancel (plus a
// tick), and the next call is answered by a new server. Without the flag:
// TestBinaryCancelledIsNoHang.
func TestCancelledThenDeafRestarted(t *testing.T) {
	h := newHarness(t, hopt{fakeClock: true, opts: func(o *Options) { defaults(o); o.KillOnCancel = true }})
	h.handshake()
	old := h.waitUp(0)
	id, hang := h.start("tools/call", `{"name":"hang"}`)
	h.waitCalls("hang", 1)
	h.cancelSeen(id)
	at := h.stepFor(30 * time.Second)
	if at == 0 {
		t.Fatal("a server deaf after a cancel was not killed within 30 s")
	}
	if limit := DefaultPingTimeout + 2*h.s.janitorTick(); at > limit {
		t.Errorf("killed %v after the cancel, want within %v", at, limit)
	}
	if h.waitUp(old) == old {
		t.Fatal("not restarted")
	}
	if r := h.tool("echo", `{"text":"next"}`); r.Get("result.content.0.text").String() != "next" {
		t.Errorf("the next call: %s", r.Raw)
	}
	h.s.mu.Lock()
	why := h.s.lastExit.Reason
	h.s.mu.Unlock()
	if !strings.Contains(why, "the client cancelled a call, and no answer to a ping came within 10s") {
		t.Errorf("exit reason %q", why)
	}
	select {
	case r := <-hang:
		t.Errorf("the cancelled call was answered: %s", r)
	default:
	}
}

// What the record says of a server not answering since its call was
// cancelled goes at once, not at the janitor's next tick, when the server
// answers (the single-threaded one finishing the cancelled call) or is
// restarted on purpose (SIGHUP: `mcp-heal heal`): in Claude Code the next
// call's PreToolUse hook, a fraction of a second later, read the stale
// record and told the model the server had answered nothing since the
// cancel (issue 30). On a fake clock the janitor does not tick here: on
// the code before, quiet stayed set after the answer. (After a restart a
// new run starts with none; requiet clears it already as the restart
// begins, while a slow server is still being stopped.)
func TestCancelledQuietGoesAtOnce(t *testing.T) {
	for _, how := range []string{"answer", "restart"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			h := newGateHarness(t)
			h.handshake()
			h.waitUp(0)
			id, _ := h.start("tools/call", `{"name":"gate"}`)
			h.waitCalls("gate", 1)
			h.cancelSeen(id)
			h.stepFor(30 * time.Second)
			if q := h.quiet(); !q.cancelled {
				t.Fatalf("not published as not answering since the cancel: %+v", q)
			}
			switch how {
			case "answer":
				if err := os.WriteFile(h.path("gate"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			case "restart":
				h.s.Restart("SIGHUP")
			}
			testenv.WaitFor(t, 5*time.Second, "the record to stop saying not answering, with no tick", func() bool { return h.quiet() == quiet{} })
		})
	}
}

// A cancelled call of a server that still answers pings is no hang: the
// server is kept.
func TestCancelledButAnsweringKept(t *testing.T) {
	h, pid, id, _, pings := busyCall(t)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
	h.stepAnswered(time.Minute)
	if h.kills() > 0 || h.childPID() != pid {
		t.Fatalf("a server answering pings was killed after a cancel")
	}
	if h.countEvents("ping") == pings {
		t.Error("no ping after the cancel")
	}
}

// The user's deadline (--hang-after) is a limit the user set: a call
// outstanding that long with no sign of life and a ping unanswered kills
// the server, at the deadline.
func TestDeadlineKills(t *testing.T) {
	h := newHarness(t, hopt{fakeClock: true, opts: func(o *Options) { defaults(o); o.HangAfter = 20 * time.Second }})
	h.handshake()
	old := h.waitUp(0)
	_, hang := h.start("tools/call", `{"name":"hang"}`)
	h.waitCalls("hang", 1)
	at := h.stepFor(40 * time.Second)
	if at < 20*time.Second || at > 20*time.Second+2*h.s.janitorTick() {
		t.Errorf("killed at %v, want at the 20 s deadline", at)
	}
	if r := h.wait(hang, "the hung call"); !strings.Contains(r.Get("error.message").String(), "(--hang-after 20s)") {
		t.Errorf("hung call: %s", r.Raw)
	}
	if h.waitUp(old) == old {
		t.Error("not restarted")
	}
}

// A kill is decided once. The janitor alone decides (the kill's log line
// is held here while it does), and the ticks after it leave the server
// being killed alone (CI under load once saw two "killing it" for one
// hang, when a probe goroutine decided while the janitor ticked on).
func TestHungServerKilledOnce(t *testing.T) {
	hold := &holdHandler{msg: "server is hung; killing it", entered: make(chan struct{}), release: make(chan struct{})}
	defer hold.open()
	h := newHarness(t, hopt{fakeClock: true, opts: func(o *Options) {
		defaults(o)
		o.KillOnCancel = true
		hold.Handler = o.Log.Handler()
		o.Log = slog.New(hold)
	}})
	h.handshake()
	old := h.waitUp(0)
	id, _ := h.start("tools/call", `{"name":"hang"}`)
	h.waitCalls("hang", 1)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
	tick := h.s.janitorTick()
	for elapsed := time.Duration(0); ; elapsed += tick {
		if elapsed > 30*time.Second {
			t.Fatal("no kill decided")
		}
		h.advanceTimer(tick, "the janitor's tick")
		select {
		case <-hold.entered:
		case <-time.After(50 * time.Millisecond):
			h.clk.WaitTimer(20*time.Second, func(d time.Duration) bool { return d == tick })
			continue
		}
		break
	}
	hold.open()
	for range 3 {
		h.step()
	}
	h.waitUp(old)
	if n := strings.Count(h.logs.String(), hold.msg); n != 1 {
		t.Errorf("the hang's kill decided %d times, want once", n)
	}
}

// holdHandler blocks each record with message msg until release is closed.
type holdHandler struct {
	slog.Handler
	msg              string
	once, openOnce   sync.Once
	entered, release chan struct{}
}

func (x *holdHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == x.msg {
		x.once.Do(func() { close(x.entered) })
		<-x.release
	}
	return x.Handler.Handle(ctx, r)
}

func (x *holdHandler) open() { x.openOnce.Do(func() { close(x.release) }) }

// A server that answers pings while a call runs is busy, not hung: it is
// pinged after each silence and never killed, however long the call takes.
func TestBusyServerNeverKilled(t *testing.T) {
	h, pid, _, call, pings := busyCall(t)
	h.stepAnswered(3 * time.Minute)
	select {
	case r := <-call:
		t.Fatalf("the slow call was answered by the shim: %s", r)
	default:
	}
	if got := h.childPID(); got != pid {
		t.Errorf("server %d replaced by %d while busy", pid, got)
	}
	if n := h.countEvents("ping") - pings; n < 10 {
		t.Errorf("%d pings in 3 minutes of a silent call, want one every few seconds", n)
	}
	if q := h.quiet(); !q.since.IsZero() {
		t.Errorf("a server answering pings published as not answering: %+v", q)
	}
}

// A request the server leaves unanswered while it answers later ones is
// ignored, not hung (Claude Code 2.1.332's server/discover to a server that
// drops unknown methods, here ping too): no reason to ping or restart, and
// never re-sent to a new process; when that one dies it is answered
// -32601. On the old code the discover was a call: pinged at 3 s, the
// server killed at 13.75 s and the discover re-sent to the next one.
func TestIgnoredRequestNoHang(t *testing.T) {
	h := newHarness(t, hopt{fakeClock: true, opts: defaults, server: func(o *example.Options, _ string) {
		o.Faults.Ignore = []string{"server/discover", "ping"}
	}})
	_, discover := h.start("server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	testenv.WaitFor(t, 5*time.Second, "the discover to reach the server", func() bool { return h.countEvents("ignored server/discover") == 1 })
	// Claude Code gives up on it and falls back to initialize.
	if r := h.call("initialize", initParams); !r.Get("result.protocolVersion").Exists() {
		t.Fatalf("initialize: %s", r.Raw)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.call("tools/list", "")
	pid := h.waitUp(0)
	if at := h.stepFor(2 * time.Minute); at > 0 {
		t.Fatalf("killed %v into an idle session with an ignored server/discover", at)
	}
	if h.childPID() != pid || h.countEvents("ignored ping") > 0 {
		t.Fatalf("pid %d -> %d, %d pings", pid, h.childPID(), h.countEvents("ignored ping"))
	}
	h.killChild()
	r := h.wait(discover, "the ignored discover")
	if r.Get("error.code").Int() != -32601 || r.Get("error.data.reason").String() != "ignored" {
		t.Errorf("the ignored discover after its server died: %s", r.Raw)
	}
	h.waitUp(pid)
	if r := h.tool("echo", `{"text":"x"}`); r.Get("result.content.0.text").String() != "x" {
		t.Errorf("a call to the new server: %s", r.Raw)
	}
	if n := h.countEvents("ignored server/discover"); n != 1 {
		t.Errorf("server/discover sent %d times, want once (never re-sent)", n)
	}
}

// A server stopped by SIGSTOP (itself, or its process under an npx-style
// wrapper) is seen at the janitor's next tick, while the call waits: no
// hang-after, no ping time-out. The call is re-sent to a new server.
func TestStoppedServerReplacedAtOnce(t *testing.T) {
	for _, mode := range []string{"server", "wrapper"} {
		t.Run(mode, func(t *testing.T) {
			var env []string
			if mode == "wrapper" {
				env = []string{"FAKE_MCP=wrapper", "FAKE_PIDFILE=$DIR/pid"}
			}
			h := newHarness(t, hopt{fakeClock: true, env: env})
			h.handshake()
			old := h.waitUp(0)
			target := old
			if mode == "wrapper" {
				b, err := os.ReadFile(h.path("pid"))
				if err != nil {
					t.Fatal(err)
				}
				target = atoi(t, string(b))
			}
			if err := syscall.Kill(target, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			_, echo := h.start("tools/call", `{"name":"echo","arguments":{"text":"after"}}`)
			// The fake clock runs ahead of real time: let the stop land
			// and the call go out before the ticks are fired.
			testenv.WaitFor(t, 10*time.Second, "the stop and the call", func() bool {
				p, _ := procinfo.StoppedIn(old)
				h.s.mu.Lock()
				defer h.s.mu.Unlock()
				return p == target && len(h.s.callsOn(h.s.run)) == 1
			})
			// Seen stopped at two ticks in a row.
			var elapsed time.Duration
			for h.kills() == 0 {
				if elapsed > 2*h.s.janitorTick() {
					t.Fatalf("a stopped server was not replaced after %v (hang-after %v)", elapsed, h.s.o.HangAfter)
				}
				elapsed += h.step()
			}
			h.waitUp(old)
			if r := h.wait(echo, "echo"); r.Get("result.content.0.text").String() != "after" {
				t.Errorf("the call to the stopped server: %s", r.Raw)
			}
			h.s.mu.Lock()
			why, cause := h.s.lastExit.Reason, h.s.lastExit.Cause
			h.s.mu.Unlock()
			if !strings.HasPrefix(why, CauseStopped) {
				t.Errorf("exit reason %q, want it to start %q", why, CauseStopped)
			}
			if cause != state.CauseStopped {
				t.Errorf("exit cause %q, want %q (the words of the call's error come from it)", cause, state.CauseStopped)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range strings.TrimSpace(s) {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Five kill -9 of a healthy server within seconds (a user killing a wedged
// server, the OOM killer) are no crash loop: each run completed its
// handshake and answered calls, or died idle by an outside signal. The
// server is never marked failed and every call is served.
func TestExternalKillsAreNoCrashLoop(t *testing.T) {
	for _, withCalls := range []bool{true, false} {
		name := "idle"
		if withCalls {
			name = "calls between kills"
		}
		t.Run(name, func(t *testing.T) {
			events := &lockedBuffer{}
			h := newHarness(t, hopt{fakeClock: true, opts: func(o *Options) { o.Lifecycle = events }})
			h.handshake()
			for i := range 7 {
				old := h.killChild()
				h.advanceUntil("a new server", func() bool { pid := h.childPID(); return pid != 0 && pid != old })
				if h.phase() == state.Failed {
					t.Fatalf("marked failed after %d outside kills of a healthy server", i+1)
				}
				if withCalls {
					if r := h.tool("echo", `{"text":"hi"}`); r.Get("result.content.0.text").String() != "hi" {
						t.Fatalf("call after kill %d: %s", i+1, r.Raw)
					}
				}
			}
			if r := h.tool("echo", `{"text":"end"}`); r.Get("result.content.0.text").String() != "end" {
				t.Errorf("call after the kills: %s", r.Raw)
			}
			if d := maxDelay(h.advanced); d > 0 {
				t.Errorf("restarts waited up to %v, want each at once", d)
			}
			// Marked failed for a while (calls refused) and recovered
			// when the next run came up is no better.
			if strings.Contains(events.String(), `"event":"failed"`) {
				t.Errorf("marked failed after outside kills of a healthy server")
			}
		})
	}
}

func maxDelay(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// A server that dies under every call is still a crash loop, whether it
// exits by itself or is killed by a signal (an OOM kill per call) while
// the call runs: after MaxFailures such runs it is marked failed and calls
// are answered at once.
func TestDyingUnderEveryCallIsACrashLoop(t *testing.T) {
	t.Run("exits", func(t *testing.T) {
		h := newHarness(t, hopt{fakeClock: true})
		h.handshake()
		for i := 1; h.phase() != state.Failed; i++ {
			if i > h.s.o.MaxFailures {
				t.Fatalf("not failed after %d runs that each died under a call", i-1)
			}
			old := h.waitUp(0)
			if r := h.tool("crash", ""); !r.Get("error").Exists() {
				t.Fatalf("crash: %s", r.Raw)
			}
			h.advanceUntil("a new server or failed", func() bool {
				pid := h.childPID()
				return pid != 0 && pid != old || h.phase() == state.Failed
			})
		}
		if r := h.tool("echo", `{"text":"x"}`); r.Get("error.data.reason").String() != "server-failed" {
			t.Errorf("call to the crash-looping server: %s", r.Raw)
		}
	})
	t.Run("killed under a call", func(t *testing.T) {
		h := newHarness(t, hopt{fakeClock: true})
		h.handshake()
		kills := 0
		for h.phase() != state.Failed {
			if kills >= 5 {
				t.Fatalf("not failed after %d runs each killed under a call", kills)
			}
			old := h.waitUp(0)
			n := h.countEvents("call hang2")
			h.start("tools/call", `{"name":"hang2"}`)
			testenv.WaitFor(t, 10*time.Second, "the call to reach the server", func() bool { return h.countEvents("call hang2") > n })
			h.killChild()
			kills++
			h.advanceUntil("a new server or failed", func() bool {
				pid := h.childPID()
				return pid != 0 && pid != old || h.phase() == state.Failed
			})
		}
		if kills != h.s.o.MaxFailures {
			t.Errorf("failed after %d kills, want %d", kills, h.s.o.MaxFailures)
		}
	})
}

// A server that closes its stdout but keeps running can answer nothing
// more: the run is over at once, even when no call is outstanding (before,
// an idle one was never noticed and a busy one only by the hang probe).
func TestClosedStdoutEndsTheRun(t *testing.T) {
	h := newHarness(t, hopt{fakeClock: true})
	h.handshake()
	old := h.waitUp(0)
	if r := h.tool("closeout", ""); r.Get("result.content.0.text").String() != "closing" {
		t.Fatalf("closeout: %s", r.Raw)
	}
	testenv.WaitFor(t, 5*time.Second, "the server to close its stdout", func() bool { return h.countEvents("closed stdout") == 1 })
	// No clock is advanced: neither a hang probe nor an idle ping is what
	// notices it.
	testenv.WaitFor(t, 20*time.Second, "a new server", func() bool { pid := h.childPID(); return pid != 0 && pid != old })
	if testenv.Alive(old) {
		t.Errorf("the server that closed its stdout (pid %d) still runs", old)
	}
	h.s.mu.Lock()
	why, cause := h.s.lastExit.Reason, h.s.lastExit.Cause
	h.s.mu.Unlock()
	if !strings.Contains(why, "closed its stdout") || cause != state.CauseStdoutClosed {
		t.Errorf("exit reason %q, cause %q; want %q", why, cause, state.CauseStdoutClosed)
	}
	if r := h.tool("echo", `{"text":"back"}`); r.Get("result.content.0.text").String() != "back" {
		t.Errorf("call after the restart: %s", r.Raw)
	}
}

// A subscriptions/listen stream is open and silent for the whole session:
// it is no call waiting for an answer, so it starts no probes (with the
// defaults that would be a server/discover every few seconds, forever).
func TestListenStreamStartsNoProbes(t *testing.T) {
	h := newHarness(t, hopt{fakeClock: true, opts: defaults, server: func(o *example.Options, _ string) { o.Era = example.EraStateless }})
	h.handshake()
	h.start("subscriptions/listen", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"notifications":{"toolsListChanged":true}}`)
	testenv.WaitFor(t, 5*time.Second, "the stream to reach the server", func() bool { return h.countEvents("listen") == 1 })
	discovers := h.countEvents("discover")
	for elapsed := time.Duration(0); elapsed < 2*time.Minute; {
		elapsed += h.step()
	}
	if n := h.countEvents("discover") - discovers; n > 0 {
		t.Errorf("%d probes in 2 minutes of an open listen stream, want none", n)
	}
}

// newGateHarness is a harness on a fake clock, with the options wrap
// writes, in front of a single-threaded server whose gate tool answers
// only once the gate file is gone.
func newGateHarness(t *testing.T) *harness {
	t.Helper()
	return newHarness(t, hopt{fakeClock: true, opts: defaults, server: func(o *example.Options, dir string) {
		o.Faults.Serial, o.Faults.GateFile = true, filepath.Join(dir, "gate")
	}})
}
