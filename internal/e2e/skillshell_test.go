//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestPreSkillShellCommandKeepsReport: Claude Code 2.1.332 runs a
// PreSkillShellCommand hook before a slash command's `!` line. A hook of
// the user's (or of another plugin) that answers deny or ask keeps
// `/mcp-heal`'s line from running (an ask is refused in -p): mcp-heal's
// binary does not run, and the model gets the command's prompt with
// Claude Code's note in place of the report. What the model sees is what
// docs/plugin-and-hooks.md says /mcp-heal does then.
func TestPreSkillShellCommandKeepsReport(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	for _, decision := range []string{"deny", "ask"} {
		t.Run(decision, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, Turn{Text: "Done."})
			s.claude = testenv.NPMBin(t, "claude", testenv.ClaudeCode332)
			s.withPlugin()
			ran := filepath.Join(s.home, "ran")
			// MCP_HEAL_BIN is what the launcher runs: a script that notes
			// it ran, then runs the test build.
			wrapper := filepath.Join(s.home, "mcp-heal-wrapper")
			if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho \"$*\" >> '"+ran+"'\nexec '"+testenv.Binary(t)+"' \"$@\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			s.env = append(s.env, "MCP_HEAL_BIN="+wrapper)
			reply, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
				"hookEventName": "PreSkillShellCommand", "permissionDecision": decision, "permissionDecisionReason": "blocked by the policy hook of the user",
			}})
			replyFile := filepath.Join(s.home, "reply.json")
			if err := os.WriteFile(replyFile, reply, 0o644); err != nil {
				t.Fatal(err)
			}
			writeJSONFile(t, filepath.Join(s.home, ".claude", "settings.json"), map[string]any{
				"hooks": map[string]any{"PreSkillShellCommand": []any{map[string]any{"hooks": []any{map[string]any{
					"type": "command", "command": "cat >/dev/null; cat " + replyFile,
				}}}}},
			})
			r := s.runP([]string{"/mcp-heal status"}, 2*time.Minute)
			r.mustOK(t)
			var seen string
			if req := s.model.Find(func(q *Request) bool { return q.Main }); req != nil {
				for _, m := range req.Messages {
					for _, b := range m.Content {
						seen += b.Text + "\n"
					}
				}
			}
			// The binary ran for SessionStart only: the line did not run.
			if runs, _ := os.ReadFile(ran); strings.Contains(string(runs), "command") {
				t.Errorf("the /mcp-heal line ran although the hook answered %s: %q", decision, runs)
			}
			for _, want := range []string{
				"[not run: blocked by hook: blocked by the policy hook of the user]", // Claude Code's words in place of the report
				"quote\nthe hook's reason, and tell the user the same report comes from `mcp-heal status` in a\nterminal",
			} {
				if !strings.Contains(seen, want) {
					t.Errorf("the model was not given %q; it saw:\n%s", want, seen)
				}
			}
		})
	}
}
