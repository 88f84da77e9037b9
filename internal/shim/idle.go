package shim

import (
	"context"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// An exit by choice is not a crash (issue 30). Many on-demand servers
// exit by themselves once idle: with code 0, owing nothing. Respawning
// such a server at once started it again and again while nobody used
// it (7 processes in 60 idle seconds), and told the model each time that
// its state was gone. The shim acts only on facts about the server's own
// process: an exit with code 0 while no call, no request of the server's
// and no request of the shim's is outstanding on a run that came up is
// the server's choice. The shim then waits in the idle phase: the next
// request from the client starts the server (it waits in the queue while
// the server starts and the handshake is replayed, as after a crash);
// no restart is counted, no note is owed, and the record says idle
// (state.Idle, Record.IdleExits), which status words as health.IdleExited
// and the monitor and hooks take as healthy. Every other end (another
// code, a signal, an exit under a call, a run that never came up) is a
// crash, with the eager respawn and the crash-loop rules of supervise.

// exitedByChoice reports whether run r, which ended as ex says, ended by
// the server's choice. Called before anything of r is settled.
func (s *Shim) exitedByChoice(r *run, ex upstream.Exit) bool {
	if ex.Code == nil || *ex.Code != 0 || ex.Signal != "" || ex.Killed || ex.Cause != "" && ex.Cause != state.CauseExit {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode != state.ModeStdio || s.isStopping() || r.upSince.IsZero() || s.run != r || !s.isUp() {
		return false
	}
	for _, e := range s.inflight {
		if e.run == r {
			return false
		}
	}
	for _, sr := range s.srvReqs {
		if sr.run == r {
			return false
		}
	}
	return true
}

// idleExit records the end of run r by the server's choice: the server
// is down, idle, and starts on the next request.
func (s *Shim) idleExit(r *run, ex upstream.Exit) {
	pid := r.conn.PID()
	s.mu.Lock()
	r.down, r.childPID = true, 0
	if s.run == r {
		s.downSince = s.clk.Now()
	}
	s.lastExit = &ex
	if len(ex.StderrTail) > 0 {
		s.stderr = ex.StderrTail
	}
	select { // a wake-up from before is stale
	case <-s.wakeCh:
	default:
	}
	s.setPhase(state.Idle)
	s.idleExits++
	s.mu.Unlock()
	s.event("exit", "pid", pid, "reason", ex.Reason, "uptime_ms", ex.UptimeMS, "generation", r.gen, "code", 0, "by_choice", true)
	s.record()
}

// waitCall waits in the idle phase for a request to start the server for
// (or a restart asked for); false when ctx ended first.
func (s *Shim) waitCall(ctx context.Context) bool {
	s.mu.Lock()
	for _, it := range s.queue {
		if it.e != nil {
			s.mu.Unlock()
			return true
		}
	}
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return false
	case <-s.wakeCh:
	case <-s.restartCh:
	}
	return true
}

// wakeIdle starts an idle server for a request just queued. Called with
// mu held.
func (s *Shim) wakeIdle() {
	if s.phase != state.Idle {
		return
	}
	select {
	case s.wakeCh <- struct{}{}:
	default:
	}
}
