package e2e

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Scenario 7: an unwrapped stdio server dies and Claude Code's respawn
// fails (it tries twice within milliseconds, then never again in the
// session). The PostToolUseFailure hook's context reaches the model with
// the reconnect instruction, and `/mcp-heal status`, run in the same
// session, reports the server as failed.
func scenarioRespawnFailed(t *testing.T, m mode, interactive bool) outcome {
	const fails = 20 // more than Claude Code ever tries
	var s *session
	var failFile string
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
		Turn{
			Before: func() error {
				if err := os.WriteFile(failFile, []byte("0\n"), 0o644); err != nil {
					return err
				}
				p, err := signalServer(s.claudePID(), exampleMatch, syscall.SIGKILL)
				if err == nil {
					waitGone(p.PID, 5*time.Second)
					time.Sleep(300 * time.Millisecond)
				}
				return err
			},
			Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after the kill"})},
		},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "again"})}},
		Turn{Text: "The ex server is down."},
		Turn{Text: "Here is the mcp-heal status."},
	)
	s.userScope = true
	failFile = dataFile(s, "starts")
	if err := os.WriteFile(failFile, []byte(fmt.Sprintf("%d\n", fails)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.addExample("ex", false, nil, "--fail-starts", fmt.Sprint(fails), "--fail-file", failFile)
	r := s.driveSteps(interactive,
		step{"Echo through the ex server.", 3},
		step{"/mcp-heal status", 4},
	)
	o := logCalls(t, s.model, ToolUseID(1, 0))
	if m == alone {
		return o
	}
	wantOK(t, "call before the kill", mustResult(t, s.model, 1, ToolUseID(0, 0)), "before")
	failed := mustResult(t, s.model, 2, ToolUseID(1, 0))
	if !failed.IsError {
		t.Fatalf("call after the kill: the model saw a success %q; want Claude Code's failed respawn", failed.Text)
	}
	hc := s.model.ForTurn(2).HookContext()
	t.Logf("hook context after the failed call: %v", hc)
	if ctx := hc["PostToolUseFailure:mcp__ex__echo"]; !strings.Contains(ctx, "/mcp reconnect ex") {
		t.Errorf("PostToolUseFailure context for the failed respawn is %q, want the `/mcp reconnect ex` instruction", ctx)
	}
	// The slash command expands into the prompt of turn 4: the model sees
	// the report.
	report := s.model.ForTurn(4).UserText()
	t.Logf("status report the model saw:\n%s", report)
	if !statusSaysFailed(report, "ex") {
		t.Errorf("/mcp-heal status did not report ex as failed; the model saw:\n%s", report)
	}
	if r != nil {
		wantHooksRan(t, r, "PreToolUse", "PostToolUseFailure", "PostToolBatch")
	}
	return o
}

// statusSaysFailed reports whether a status report has a line naming
// server as failed.
func statusSaysFailed(report, server string) bool {
	for _, line := range strings.Split(report, "\n") {
		if strings.Contains(line, server) && strings.Contains(line, "failed") {
			return true
		}
	}
	return false
}

func TestScenario7RespawnFailed(t *testing.T) {
	t.Parallel()
	scenarioRespawnFailed(t, hooksOnly, false)
}

func TestScenario7RespawnFailedInteractive(t *testing.T) {
	t.Parallel()
	scenarioRespawnFailed(t, hooksOnly, true)
}
