//go:build unix

package e2e

import (
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// An answer holding invalid UTF-8 and lone surrogates (example.BadText: a
// C or shell server, a file name in a non-UTF-8 locale) reaches the model
// through the shim exactly as it does with Claude Code alone, whose
// client decodes it with U+FFFD and takes it (issue 23 item 3). Before,
// the shim dropped the line as not JSON-RPC and the call waited for ever.
func TestBadTextAsAlone(t *testing.T) {
	testenv.NeedsFull(t, "real Claude Code")
	t.Parallel()
	modes := []mode{alone, healed}
	seen := make([]ToolResult, len(modes))
	t.Run("group", func(t *testing.T) {
		for i, m := range modes {
			t.Run(m.String(), func(t *testing.T) {
				t.Parallel()
				s := newModeSession(t, m,
					Turn{Tools: []ToolUse{call("ex", "badtext", map[string]any{})}},
					Turn{Text: "Answered."},
				)
				s.addExample("ex", m.wrap(), nil, "--test-tools")
				s.drive(false, "Call badtext.", 1)
				seen[i] = mustResult(t, s.model, 1, ToolUseID(0, 0))
			})
		}
	})
	a, h := seen[0], seen[1]
	if t.Failed() {
		return
	}
	t.Logf("the model saw %q (is_error %v) alone", a.Text, a.IsError)
	if a.IsError || a.Text == "" || h.IsError != a.IsError || h.Text != a.Text {
		t.Errorf("through the shim the model saw %q (is_error %v), alone %q (is_error %v)", h.Text, h.IsError, a.Text, a.IsError)
	}
}
