//go:build unix

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 30, item 5, through the real Claude Code: a server dies by SIGKILL
// after writing cutAt bytes of a cutSize answer (bigline-server.js, tool
// big with cut; the sizes in linelimit_test.go). Alone, the call fails with "Connection closed" and the
// next call starts the server again. With mcp-heal the model gets one
// account, true and in mcp-heal's words: the server exited after N bytes
// of its answer, the call may or may not have taken effect, and whether it
// was restarted; nothing after it contradicts it. (The shim before issue
// 30 gave three: the cut line, "-32603 ... the server is still running.
// Retry the call", then "was restarted: killed by signal 9" on the next
// call.)
func scenarioCutAnswer(t *testing.T, m mode) outcome {
	s, o, cut, after := cutSession(t, m, "big", map[string]any{"bytes": cutSize, "cut": cutAt})
	if !cut.IsError {
		t.Errorf("%s: the cut call answered %q; want it failed", m, truncate(cut.Text, 300))
	}
	if m == alone {
		return o
	}
	// One account, true: on the cut call, the bytes the server wrote, the
	// call's effect unknown; no "still running, retry", and no restart
	// note on the next call.
	if want := fmt.Sprintf("after %d bytes", cutAt); !strings.Contains(cut.Text, want) || !strings.Contains(cut.Text, "may or may not have taken effect") {
		t.Errorf("the cut call's account %q: want %q and that the call may or may not have taken effect", truncate(cut.Text, 600), want)
	}
	if strings.Contains(after.Text, "mcp-heal") || strings.Contains(after.Text, "restarted") {
		t.Errorf("the call after the cut carries a second account: %q", truncate(after.Text, 600))
	}
	// Nothing the model holds says otherwise, and no hook tells it again
	// in other words: the shim's error is the one account.
	held := heldText(s.model.ForTurn(3))
	for _, false_ := range []string{"still running", "Retry the call", "killed by signal 9 (SIGKILL); this call waited"} {
		if strings.Contains(held, false_) {
			t.Errorf("the model holds %q about the cut call: %q", false_, truncate(held, 2000))
		}
	}
	for turn, c := range allHookContexts(s.model) {
		for event, text := range c {
			if strings.Contains(text, "may or may not have taken effect") {
				t.Errorf("turn %d: the %s hook tells the cut call's account again: %q", turn, event, truncate(text, 600))
			}
		}
	}
	t.Logf("hook contexts: %v", allHookContexts(s.model))
	return o
}

// cutSession runs echo, then tool with args (its answer cut by the
// server's death: bigline-server.js), then echo, and returns the session,
// its outcome, and the results of the cut call and the one after it. The call after the cut must be
// answered by a new server process, alone and healed.
func cutSession(t *testing.T, m mode, tool string, args map[string]any) (s *session, o outcome, cut, after ToolResult) {
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "before"})}},
		Turn{Tools: []ToolUse{call("bl", tool, args)}},
		Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "after"})}},
		Turn{Text: "Done."},
	)
	s.addNodeScript("bl", m.wrap(), nil, "bigline-server.js")
	s.drive(false, "Call echo, "+tool+", then echo.", 3)
	o = logCalls(t, s.model, ToolUseID(1, 0))
	before := mustResult(t, s.model, 1, ToolUseID(0, 0))
	cut, after = mustResult(t, s.model, 2, ToolUseID(1, 0)), mustResult(t, s.model, 3, ToolUseID(2, 0))
	// The account as the model holds it, for the test log and the docs.
	t.Logf("%s: the cut call: is_error=%v %q", m, cut.IsError, truncate(cut.Text, 1000))
	t.Logf("%s: the call after it: is_error=%v %q (pids %s then %s)", m, after.IsError, truncate(after.Text, 1000), serverPID(before), serverPID(after))
	if after.IsError || !strings.HasPrefix(after.Text, "after pid ") || serverPID(after) == serverPID(before) {
		t.Errorf("%s: the call after the cut %q; want it answered by a new server process", m, after.Text)
	}
	return s, o, cut, after
}

// A read-only call whose answer its server's death cut (SIGKILL after
// cutAt bytes of cutSize, the first time only: tool peek with cutOnce).
// Alone, the call fails with "Connection closed". With mcp-heal the call
// is re-sent to the new process, as any read-only call lost with its
// server is: Claude Code skips the cut line (TestClaudeCodeCutLine) and
// the model gets the whole answer. Before, it got the account "the
// answer is lost ... this call was not re-sent".
func scenarioCutReadOnly(t *testing.T, m mode) outcome {
	_, o, peek, _ := cutSession(t, m, "peek", map[string]any{"bytes": cutSize, "cut": cutAt, "cutOnce": filepath.Join(t.TempDir(), "cut")})
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

func TestScenario12CutAnswerOneAccount(t *testing.T) {
	aloneAndHealed(t, "Claude Code", func(t *testing.T, m mode) { scenarioCutAnswer(t, m) })
}
