package shim

import (
	"time"

	"github.com/mcp-heal/mcp-heal/internal/liveness"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// One run of the server is what one dial made: a child process (or a
// remote session) from its dial to its end. A run value is made at each
// dial (install) and stays the current one until the next dial, so a
// restart drops the old run's state by construction, as consul-template's
// child makes a fresh exitCh per start. What was sent on a run (an entry,
// a server->client request, a probe) carries it; a callback whose run is
// not the current one (s.run) is stale: its server is gone.
type run struct {
	gen  uint64        // 1 for the first dial; for the lifecycle log
	conn upstream.Conn // fixed at the dial; nil for the run before the first

	// Guarded by mu:
	down     bool              // the connection ended (or never was)
	childPID int               // the server's pid while it runs; 0 after (and for a remote)
	childAt  time.Time         // when it was started (wall clock, for the record)
	upSince  time.Time         // when its handshake replay succeeded (goUp); zero until then
	answered int               // calls of the client's it answered (provedHealthy)
	live     liveness.Detector // the liveness rules' state for this server (hang.go)
	quiet    quiet             // what the record says of it not answering (quietNow)
	tasks    map[string]bool   // task ids its server handed out (tasks.go)
	// checked is when the janitor last judged the server (quietNow):
	// this run or, before its first tick, the one it replaced. A test on
	// a fake clock waits for the judgement at the time it moved to.
	checked time.Time

	// killCause (a state.Cause*) and killWhy, guarded by mu, are set
	// when the shim ended this run (kill): the client reads why.
	killCause, killWhy string
}

// newRun makes the run of connection c, dialled at now, the current one.
// Its liveness rules start over, keeping what they learnt of the program
// (liveness.Detector.Up). Called with mu held.
func (s *Shim) newRun(c upstream.Conn, now time.Time) *run {
	r := &run{gen: s.run.gen + 1, conn: c, childPID: c.PID(), childAt: time.Now(), live: s.run.live, checked: s.run.checked}
	r.live.Up(now)
	s.run = r
	return r
}

// first reports whether r is the first run of this shim.
func (r *run) first() bool { return r.gen == 1 }

// killing reports whether the shim ended r (kill): its end is decided.
// Called with mu held.
func (r *run) killing() bool { return r.killCause != "" }

// serving returns the current run when its server is up and not being
// killed: the one the janitor may check, probe and kill; nil when there
// is none. Called with mu held.
func (s *Shim) serving() *run {
	r := s.run
	if !s.isUp() || r.down || r.killing() {
		return nil
	}
	return r
}
