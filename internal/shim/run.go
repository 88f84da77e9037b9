package shim

import "github.com/mcp-heal/mcp-heal/internal/upstream"

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
	down bool          // guarded by mu: the connection ended (or never was)

	// killCause (a state.Cause*) and killWhy, guarded by mu, are set
	// when the shim ended this run (kill): the client reads why.
	killCause, killWhy string
}

// newRun makes the run of connection c, dialled just now, the current
// one. Called with mu held.
func (s *Shim) newRun(c upstream.Conn) *run {
	r := &run{gen: s.run.gen + 1, conn: c}
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
