//go:build unix

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// Issue 30, item 4, through the real Claude Code: a server that exits with
// code 0 after idleExit without a message, as on-demand servers do. An
// interactive session calls it, stays idle for idleFor, and calls it
// again. Alone, Claude Code starts it again for the second call: one
// process per call. An exit by choice is no crash: with mcp-heal it starts
// on the next call too, and the model gets no monitor line meanwhile (the
// shim before issue 30 respawned it at once, again and again: 7 processes
// in 60 idle seconds, a monitor line each waking the model).
const (
	idleExit = 8 * time.Second
	idleFor  = 60 * time.Second
)

func scenarioIdleExit(t *testing.T, m mode) outcome {
	s := newModeSession(t, m,
		Turn{Tools: []ToolUse{call("w", "state", nil)}},
		Turn{Text: "Done."},
		Turn{Tools: []ToolUse{call("w", "state", nil)}},
		Turn{Text: "Done again."},
	)
	w := s.addWaiting("w", m.wrap(), "--idle-exit", fmt.Sprint(idleExit.Seconds()))
	ts := s.startInteractive(readyPrompt, time.Minute)
	ts.ask("Read the state of w.", 1, "the first call never ended")
	time.Sleep(idleFor)
	idle := w.starts()
	ts.ask("Read it again.", 3, "the call after the idle time never ended")
	ts.quit()
	o := logCalls(t, s.model, ToolUseID(2, 0))
	starts := w.starts()
	// The last request holds every line the model was handed.
	main := s.model.Main()
	lines := monitorLines(main[len(main)-1])
	o.Note = fmt.Sprintf("%d processes started, %d model requests, %d monitor lines", len(starts), len(main), len(lines))
	t.Logf("%s: %d processes started in %v idle (%v), %d over the session; %d model requests; monitor lines %q", m, len(idle), idleFor, idle, len(starts), len(main), lines)
	if m == alone {
		// Claude Code 2.1.332 alone, interactive: the server that exited
		// is not started again; the next call is refused ("No such tool
		// available ... has disconnected").
		return o
	}
	for _, turn := range []int{1, 3} {
		if _, _, ok := serverState(mustResult(t, s.model, turn, ToolUseID(turn-1, 0))); !ok {
			t.Errorf("call %d did not answer", turn/2+1)
		}
	}
	if len(idle) != 1 || len(starts) != 2 || len(lines) != 0 || len(main) != 4 {
		t.Errorf("%d processes while idle and %d over the session, %d model requests, monitor lines %q; want 1 and 2 (one per call), 4, none", len(idle), len(starts), len(main), lines)
	}
	return o
}

func TestScenario11IdleExitStartsOnNextCall(t *testing.T) {
	aloneAndHealed(t, "Claude Code in tmux", func(t *testing.T, m mode) { scenarioIdleExit(t, m) })
}
