package shim

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var phases = []string{state.Starting, state.Running, state.Restarting, state.Backoff, state.Failed, state.Stopping}

// Every move the supervisor may make, and no other: stopping is reachable
// from everywhere and final; a refused move leaves the phase as it was and
// is logged as the bug it is.
func TestPhaseTransitions(t *testing.T) {
	for _, from := range phases {
		for _, to := range phases {
			logs := &testenv.LockedBuffer{}
			s := &Shim{phase: from, log: slog.New(slog.NewTextHandler(logs, nil))}
			want := from == to && to != state.Stopping ||
				to == state.Stopping && from != state.Stopping ||
				slices.Contains(transitions[from], to)
			got := s.setPhase(to)
			if got != want {
				t.Errorf("%s -> %s: allowed %v, want %v", from, to, got, want)
			}
			if want && s.phase != to || !want && s.phase != from {
				t.Errorf("%s -> %s: phase is now %s", from, to, s.phase)
			}
			if !want && from != state.Stopping && logs.String() == "" {
				t.Errorf("%s -> %s refused without a log line", from, to)
			}
			if s.isUp() != (s.phase == state.Running) || s.isFailed() != (s.phase == state.Failed) || s.isStopping() != (s.phase == state.Stopping) {
				t.Errorf("%s: derived flags disagree with the phase", s.phase)
			}
		}
	}
	for _, p := range []string{state.Running, state.Restarting, state.Backoff, state.Failed} {
		if !slices.ContainsFunc(phases, func(from string) bool { return slices.Contains(transitions[from], p) }) {
			t.Errorf("phase %s cannot be reached", p)
		}
	}
}

// A restart on purpose that cuts a crash loop's backoff short leaves the
// failed state (it used to clear a flag and leave the phase at failed).
func TestRestartFreshLeavesFailed(t *testing.T) {
	s := &Shim{phase: state.Failed, log: slog.New(slog.DiscardHandler)}
	s.restartFresh()
	if s.phase != state.Restarting || s.isFailed() {
		t.Errorf("after a restart on purpose from failed: phase %s", s.phase)
	}
	s.phase = state.Backoff
	s.restartFresh()
	if s.phase != state.Backoff {
		t.Errorf("a restart on purpose during a plain backoff changed the phase to %s", s.phase)
	}
}
