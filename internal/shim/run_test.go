package shim

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/clock"
	"github.com/mcp-heal/mcp-heal/internal/liveness"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// stubConn is a connection nothing is sent on: the tables below ask only
// which run a callback belongs to and what the phase allows.
type stubConn struct{ pid int }

func (stubConn) Send([]byte) error     { return nil }
func (stubConn) Recv() <-chan []byte   { return nil }
func (stubConn) Done() <-chan struct{} { return nil }
func (stubConn) Exit() upstream.Exit   { return upstream.Exit{} }
func (c stubConn) PID() int            { return c.pid }
func (stubConn) Close() error          { return nil }
func bareShim(phase string) *Shim {
	clk := clock.NewFake()
	return &Shim{
		phase: phase, mode: state.ModeStdio, log: slog.New(slog.DiscardHandler), clk: clk,
		inflight: map[string]*entry{}, srvReqs: map[string]*srvReq{},
		run: &run{down: true, live: *liveness.New(liveness.Config{}, clk.Now())},
	}
}

// A dial makes a fresh run, whatever the phase it comes in: the next
// generation, the child's pid, nothing of the old run's verdicts (its
// "not answering", its calls answered, its kill), and the phase the
// supervisor's table gives a first start, a restart, a start on demand
// and a start from the failed state.
func TestRunAtEachDial(t *testing.T) {
	for _, tc := range []struct {
		from  string
		first bool
		want  string
	}{
		{state.Starting, true, state.Starting},
		{state.Backoff, true, state.Starting}, // the first dial failed: never up yet
		{state.Restarting, false, state.Restarting},
		{state.Backoff, false, state.Restarting},
		{state.Idle, false, state.Starting}, // a start on demand (idle.go)
		{state.Failed, true, state.Failed},  // failed until a server answers
		{state.Failed, false, state.Failed},
		{state.Stopping, false, state.Stopping},
	} {
		s := bareShim(tc.from)
		old := s.run
		if !tc.first {
			old.gen, old.conn, old.answered, old.killCause = 4, stubConn{pid: 6}, 3, state.CauseHang
			old.quiet = quiet{since: s.clk.Now(), method: "tools/call"}
			old.upSince = s.clk.Now()
		}
		old.checked = s.clk.Now()
		r := s.install(stubConn{pid: 7})
		name := tc.from + map[bool]string{true: ", first dial", false: ", a later dial"}[tc.first]
		if s.phase != tc.want {
			t.Errorf("%s: phase %s, want %s", name, s.phase, tc.want)
		}
		if s.run != r || r == old || r.gen != old.gen+1 || r.first() != tc.first {
			t.Errorf("%s: run %d (first %v) after run %d: not a fresh current run", name, r.gen, r.first(), old.gen)
		}
		if r.down || r.childPID != 7 || r.answered != 0 || r.killing() || r.quiet != (quiet{}) || !r.upSince.IsZero() {
			t.Errorf("%s: the new run starts with %+v", name, *r)
		}
		if !r.checked.Equal(old.checked) {
			t.Errorf("%s: the janitor's last judgement (%v) was not carried over (%v)", name, old.checked, r.checked)
		}
	}
}

// Phase × run: what a callback may do depends on the phase and on whether
// its run is the current one, still up, not being killed. Only the
// current run, up and not being killed, is served (probed, checked,
// killed by the janitor); only the current live run goes up; a stale
// run's callbacks touch nothing of the current run's.
func TestRunPhaseTable(t *testing.T) {
	phases := []string{state.Starting, state.Running, state.Restarting, state.Backoff, state.Failed, state.Idle, state.Stopping}
	kinds := []string{"current", "current, ended", "current, being killed", "stale"}
	code0 := 0
	byChoice := upstream.Exit{Exit: state.Exit{Code: &code0}}
	for _, p := range phases {
		for _, k := range kinds {
			s := bareShim(p)
			old := &run{gen: 1, conn: stubConn{pid: 8}, down: true, upSince: s.clk.Now()}
			cur := &run{gen: 2, conn: stubConn{pid: 9}, upSince: s.clk.Now(), live: *liveness.New(liveness.Config{}, s.clk.Now())}
			s.run = cur
			r := cur
			switch k {
			case "current, ended":
				cur.down = true
			case "current, being killed":
				cur.killCause = state.CauseHang
			case "stale":
				r = old
			}
			name := p + " × " + k

			wantServed := p == state.Running && k != "current, ended" && k != "current, being killed"
			if got := s.serving(); (got != nil) != wantServed || got != nil && got != cur {
				t.Errorf("%s: served %v (the current run: %v), want %v", name, got != nil, got == cur, wantServed)
			}

			// The end by the server's choice and "proved healthy" are
			// asked of the run that ended, and only the current one
			// counts.
			wantChoice := p == state.Running && r == cur
			if got := s.exitedByChoice(r, byChoice); got != wantChoice {
				t.Errorf("%s: exitedByChoice = %v, want %v", name, got, wantChoice)
			}
			r.answered = 1
			if got := s.provedHealthy(r, upstream.Exit{}); got != (r == cur) {
				t.Errorf("%s: provedHealthy = %v, want %v", name, got, r == cur)
			}

			// A sign of life from a stale run leaves the current run's
			// rules alone: its silence still counts.
			s.clk.(*clock.Fake).Advance(time.Hour)
			s.heard(r)
			silent := cur.live.Due(s.clk.Now(), s.clk.Now().Add(-time.Hour)).Silent
			if wantHeard := r == cur; (silent == 0) != wantHeard {
				t.Errorf("%s: after heard, the current run was silent %v (heard: %v)", name, silent, wantHeard)
			}

			// goUp: the current live run goes up where the phase table
			// allows running; nothing else moves.
			r.upSince = time.Time{}
			wantUp := r == cur && !cur.down && (p == state.Running || p == state.Starting || p == state.Restarting || p == state.Failed)
			s.goUp(r)
			if got := s.phase == state.Running && !r.upSince.IsZero(); got != wantUp {
				t.Errorf("%s: goUp: phase %s, up since %v; want up %v", name, s.phase, r.upSince, wantUp)
			}
			if !wantUp && s.phase != p {
				t.Errorf("%s: goUp moved the phase to %s", name, s.phase)
			}
		}
	}
}
