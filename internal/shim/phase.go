package shim

import (
	"fmt"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// The supervisor is a state machine over the phases of state.Record.State.
// Shim.phase is its only state: it is assigned in setPhase alone, under mu,
// and every other question about the upstream (is it up, is it failed, are
// we stopping) is derived from it.
//
//	starting   --goUp-->            running
//	starting   --dial failed-->     backoff | failed
//	running    --died, restart-->   restarting | failed
//	running    --exited by choice-> idle        (idle.go)
//	idle       --a request-->       starting | backoff | failed
//	restarting --goUp-->            running
//	restarting --dial failed-->     backoff | failed
//	backoff    --dialled-->         starting (never up yet) | restarting
//	failed     --goUp-->            running     (recovered by itself)
//	failed     --restart-->         restarting  (SIGHUP, heal: a fresh start)
//	any        --client gone-->     stopping    (terminal)
//
// failed is left only by a connection that came up or by a restart on
// purpose: a respawn attempt from the failed state stays failed, so that
// calls keep being answered at once until a server answers again.
var transitions = map[string][]string{
	state.Starting:   {state.Running, state.Restarting, state.Backoff, state.Failed},
	state.Running:    {state.Restarting, state.Failed, state.Idle},
	state.Idle:       {state.Starting, state.Backoff, state.Failed},
	state.Restarting: {state.Running, state.Restarting, state.Backoff, state.Failed},
	state.Backoff:    {state.Starting, state.Restarting, state.Backoff, state.Failed},
	state.Failed:     {state.Running, state.Restarting, state.Failed},
	state.Stopping:   nil,
}

// setPhase moves the supervisor to phase to and reports whether it did.
// Stopping is reachable from every phase and final; any other move not in
// transitions is a bug in the shim, logged and refused so that the shim
// keeps a phase it can explain. Called with mu held.
func (s *Shim) setPhase(to string) bool {
	from := s.phase
	if from == to && to != state.Stopping {
		return true
	}
	ok := to == state.Stopping && from != state.Stopping
	for _, p := range transitions[from] {
		ok = ok || p == to
	}
	if !ok {
		if from != state.Stopping {
			s.log.Error("shim: refused a phase change", "from", from, "to", to, "err", fmt.Sprintf("no transition %s -> %s", from, to))
		}
		return false
	}
	s.phase = to
	return true
}

// isUp reports that the connection is replayed and takes requests. Called
// with mu held.
func (s *Shim) isUp() bool { return s.phase == state.Running }

// isFailed reports the crash-loop state. Called with mu held.
func (s *Shim) isFailed() bool { return s.phase == state.Failed }

// isStopping reports that the client went away: nothing is restarted and
// nothing of the session is settled any more. Called with mu held.
func (s *Shim) isStopping() bool { return s.phase == state.Stopping }

// stop moves the supervisor to its final phase, once.
func (s *Shim) stop() {
	s.mu.Lock()
	s.setPhase(state.Stopping)
	s.mu.Unlock()
}
