package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// Scenario 1: a stdio server is SIGKILLed between two calls. With
// mcp-heal the next call succeeds at a warm server's latency (the shim
// respawned it while the user was thinking); alone, Claude Code spawns it
// again on that call and the call pays the cold start.
func scenarioKilledBetweenCalls(t *testing.T, m mode) outcome {
	const coldStart = 1500 * time.Millisecond
	var s *session
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "warm"})}},
		Turn{
			Before: func() error {
				p, err := signalServer(s.claudePID(), exampleMatch, syscall.SIGKILL)
				if err != nil {
					return err
				}
				waitGone(p.PID, 5*time.Second)
				time.Sleep(3 * time.Second) // the user reads the answer
				return nil
			},
			Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after the kill"})},
		},
		Turn{Text: "Both calls answered."},
	)
	s.addExample("ex", m.wrap(), nil, "--start-delay", coldStart.String())
	r := s.drive(false, "Call the ex server twice.", 2)
	calls := s.model.Calls()
	o := measure(calls, ToolUseID(1, 0))
	if m == alone {
		return o
	}
	wantOK(t, "first call", mustResult(t, s.model, 1, ToolUseID(0, 0)), "warm")
	wantOK(t, "call after the kill", mustResult(t, s.model, 2, ToolUseID(1, 0)), "after the kill")
	if len(calls) != 2 {
		t.Fatalf("got %d tool calls, want 2", len(calls))
	}
	warm, after := calls[0].Duration(), calls[1].Duration()
	t.Logf("warm call %v, call after the kill %v", warm, after)
	// A cold start costs coldStart; a warm call takes a few ms plus hooks.
	if after >= coldStart || after > warm+700*time.Millisecond {
		t.Errorf("call after the kill took %v (warm call %v, cold start %v): want a warm server's latency", after, warm, coldStart)
	}
	wantHooksRan(t, r, "PreToolUse", "PostToolUse", "PostToolBatch")
	return o
}

func TestScenario1KilledBetweenCalls(t *testing.T) {
	t.Parallel()
	record("1. stdio server SIGKILLed between calls", healed, scenarioKilledBetweenCalls(t, healed))
}

// Scenario 2: a stdio server is SIGKILLed during a non-idempotent call
// (counter_increment): the model gets one clear "may or may not have taken
// effect" error and the next call succeeds; killed during a read-only call
// (echo), the call itself succeeds.
func scenarioKilledDuringCall(t *testing.T, m mode, interactive bool) outcome {
	var s *session
	killDuring := func() error {
		// The call waits 2 s (delay_ms) in the server before acting.
		p, err := waitProc(s.claudePID(), exampleMatch, 5*time.Second)
		if err != nil {
			return err
		}
		time.Sleep(700 * time.Millisecond)
		return syscall.Kill(p.PID, syscall.SIGKILL)
	}
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("ex", "counter_increment", map[string]any{"delay_ms": 2000})}, After: killDuring},
		Turn{Tools: []ToolUse{call("ex", "counter_increment", nil)}},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "read-only", "delay_ms": 2000})}, After: killDuring},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "last"})}},
		Turn{Text: "All calls made."},
	)
	s.addExample("ex", m.wrap(), nil, "--state-file", dataFile(s, "counter"))
	r := s.drive(interactive, "Increment the counter, then echo.", 4)
	o := measure(s.model.Calls(), ToolUseID(0, 0))
	if m == alone {
		return o
	}
	unknown := mustResult(t, s.model, 1, ToolUseID(0, 0))
	if !unknown.IsError || !strings.Contains(unknown.Text, "may or may not have taken effect") {
		t.Errorf("killed during counter_increment: the model saw is_error=%v %q, want the shim's clear outcome-unknown error", unknown.IsError, unknown.Text)
	}
	wantOK(t, "counter_increment after the kill", mustResult(t, s.model, 2, ToolUseID(1, 0)), "1")
	wantOK(t, "echo killed mid-call (read-only: retried)", mustResult(t, s.model, 3, ToolUseID(2, 0)), "read-only")
	wantOK(t, "last echo", mustResult(t, s.model, 4, ToolUseID(3, 0)), "last")
	if r != nil {
		wantHooksRan(t, r, "PreToolUse", "PostToolUse", "PostToolBatch")
	}
	return o
}

func TestScenario2KilledDuringCall(t *testing.T) {
	t.Parallel()
	record("2. stdio server SIGKILLed during a call", healed, scenarioKilledDuringCall(t, healed, false))
}
