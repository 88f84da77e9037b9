//go:build unix

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// A read-only call whose answer its server's death cut (SIGKILL after
// cutAt bytes of cutSize, the first time only: bigline-server.js, tool
// peek with cutOnce). Alone, the call fails with "Connection closed".
// With mcp-heal the call is re-sent to the new process, as any read-only
// call lost with its server is: Claude Code skips the cut line
// (TestClaudeCodeCutLine) and the model gets the whole answer. Before,
// it got the account "the answer is lost ... this call was not re-sent".
func scenarioCutReadOnly(t *testing.T, m mode) outcome {
	once := filepath.Join(t.TempDir(), "cut")
	s := newModeSession(t, m,
		Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "before"})}},
		Turn{Tools: []ToolUse{call("bl", "peek", map[string]any{"bytes": cutSize, "cut": cutAt, "cutOnce": once})}},
		Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "after"})}},
		Turn{Text: "Done."},
	)
	s.addNodeScript("bl", m.wrap(), nil, "bigline-server.js")
	s.drive(false, "Call echo, peek, then echo.", 3)
	o := logCalls(t, s.model, ToolUseID(1, 0))
	before, peek, after := mustResult(t, s.model, 1, ToolUseID(0, 0)), mustResult(t, s.model, 2, ToolUseID(1, 0)), mustResult(t, s.model, 3, ToolUseID(2, 0))
	t.Logf("%s: the cut call: is_error=%v %q", m, peek.IsError, truncate(peek.Text, 600))
	t.Logf("%s: the call after it: is_error=%v %q (pids %s then %s)", m, after.IsError, truncate(after.Text, 300), serverPID(before), serverPID(after))
	if after.IsError || serverPID(after) == serverPID(before) {
		t.Errorf("%s: the next call %q; want it answered by a new server process", m, after.Text)
	}
	if m == alone {
		if !peek.IsError {
			t.Errorf("alone: the cut call answered %q; want it failed", truncate(peek.Text, 300))
		}
		return o
	}
	if peek.IsError || strings.Contains(peek.Text, "answer is lost") || strings.Contains(peek.Text, "not re-sent") {
		t.Errorf("the read-only call whose answer was cut: is_error=%v %q; want the re-sent call's answer", peek.IsError, truncate(peek.Text, 600))
	}
	return o
}

func TestScenario12CutReadOnlyResent(t *testing.T) {
	aloneAndHealed(t, "Claude Code", func(t *testing.T, m mode) { scenarioCutReadOnly(t, m) })
}
