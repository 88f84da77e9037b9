//go:build unix

package e2e

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"
)

// TestScenario4Deaf is the hang the SIGSTOP row does not cover: the server
// keeps running (state S, not T) but reads nothing and answers nothing,
// pings included, with a read-only call outstanding. Through the entry
// `wrap` writes (no hang flags: the defaults, docs/shim.md), the shim must
// see it silent to its pings within about 15 s, restart it and re-send the
// read-only call, which the model sees succeed.
func TestScenario4Deaf(t *testing.T) {
	t.Parallel()
	scenarioDeaf(t, healed)
}

func scenarioDeaf(t *testing.T, m mode) outcome {
	var s *session
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
		Turn{
			// The example server hangs on the next call that arrives
			// while this file exists, and removes it: the server started
			// in its place works.
			Before: func() error { return os.WriteFile(dataFile(s, "hang"), nil, 0o600) },
			Tools:  []ToolUse{call("ex", "echo", map[string]any{"text": "while deaf"})},
		},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after"})}},
		Turn{Text: "Done."},
	)
	// Far above the ~15 s detection, so a failure is the shim's, not
	// Claude Code giving up on the call; Claude Code alone (the report's
	// baseline) waits this long for every call to the deaf server.
	s.env = append(s.env, "MCP_TOOL_TIMEOUT=45000")
	s.addExample("ex", m.wrap(), nil, "--hang-file", dataFile(s, "hang"))
	r := s.drive(false, "Echo through the ex server.", 3)
	calls := s.model.Calls()
	o := logCalls(t, s.model, ToolUseID(1, 0))
	if _, err := os.Stat(dataFile(s, "hang")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the hang file is still there (%v): the server never went deaf", err)
	}
	if m == alone {
		return o
	}
	wantOK(t, "read-only call to the deaf server", mustResult(t, s.model, 2, ToolUseID(1, 0)), "while deaf")
	wantOK(t, "next call", mustResult(t, s.model, 3, ToolUseID(2, 0)), "after")
	t.Logf("the call to the deaf server took %v", calls[1].Duration())
	// hang-after 3 s + ping timeout 10 s, plus a restart: "within about
	// 15 s" (issue 17), with room for a loaded machine.
	if d := calls[1].Duration(); d > 25*time.Second {
		t.Errorf("the call to the deaf server took %v, want it detected and re-sent within about 15 s", d)
	}
	wantHooksRan(t, r, "PreToolUse")
	return o
}
