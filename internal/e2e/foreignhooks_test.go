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

// rewakeSaid is what the probe plugin's PostToolBatch hook says on stderr.
const rewakeSaid = "rewake-probe: the batch needs attention"

// rewakePlugin is a plugin whose only hook is a PostToolBatch run with
// asyncRewake that reads its payload, says rewakeSaid on stderr and exits
// 2: the way an asyncRewake hook asks to wake the model.
func rewakePlugin(t *testing.T) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	writeJSONFile(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), map[string]any{"name": "rewake-probe", "version": "1.0.0"})
	script := filepath.Join(dir, "hooks", "batch.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\necho '"+rewakeSaid+"' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSONFile(t, filepath.Join(dir, "hooks", "hooks.json"), map[string]any{"hooks": map[string]any{
		"PostToolBatch": []any{map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/batch.sh", "timeout": 60, "asyncRewake": true,
		}}}},
	}})
	return dir
}

// TestAsyncRewakeDelivery pins how Claude Code 2.1.328 treats what an
// asyncRewake PostToolBatch hook says by exiting 2 (docs/claude-code-behaviour.md):
//   - interactive: the turn goes on without waiting; the stderr reaches the
//     model after the turn, in a main-loop request of its own that wakes it,
//     as a background-task notification ("Stop hook blocking error from
//     command \"PostToolBatch\": <stderr>");
//   - `-p`: the hook is waited for before the batch's results go to the
//     model, and its exit 2 ends the session (result event with
//     terminal_reason "hook_stopped"): the model never sees the batch's
//     results nor the stderr.
//
// So a hook that must speak to the model in `-p` sessions cannot use
// asyncRewake; and since Claude Code charges any hook that runs after
// every batch about as much as a blocking one (docs/end-to-end.md, hook
// cost), the plugin has no PostToolBatch hook at all.
func TestAsyncRewakeDelivery(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	for _, interactive := range []bool{false, true} {
		name := "print"
		if interactive {
			name = "interactive"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSession(t,
				Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "one"})}},
				Turn{Text: "Echoed."},
			)
			s.plugin = rewakePlugin(t)
			s.addExample("ex", false, nil)
			said := func(r *Request) bool { return strings.Contains(r.Context(), rewakeSaid) }
			if !interactive {
				r := s.runP([]string{"Echo once."}, 3*time.Minute)
				r.mustOK(t)
				var result struct {
					TerminalReason string `json:"terminal_reason"`
				}
				for _, e := range r.Events {
					if e.Type == "result" {
						json.Unmarshal(e.Raw, &result)
					}
				}
				if result.TerminalReason != "hook_stopped" || s.model.ForTurn(1) != nil || s.model.Find(said) != nil {
					t.Errorf("-p: terminal_reason %q, model asked for turn 1: %v, stderr seen: %v; want the session ended by the hook (hook_stopped) before the model saw anything more\nstream:\n%s",
						result.TerminalReason, s.model.ForTurn(1) != nil, s.model.Find(said) != nil, r.dump())
				}
				return
			}
			s.driveSteps(true, step{Prompt: "Echo once.", Want: said})
			wantOK(t, "the echo call", mustResult(t, s.model, 1, ToolUseID(0, 0)), "one")
			woke := s.model.Find(said)
			t.Logf("the request that carried the hook's stderr (turn %d):\n%s", woke.Turn, woke.Context())
			if woke.Turn < 2 || !strings.Contains(woke.Context(), "<task-notification>") ||
				!strings.Contains(woke.Context(), `from command "PostToolBatch": `+rewakeSaid) {
				t.Errorf("interactive: the stderr came in the request for turn %d; want a task notification after the turn (turn 2 or later) quoting the hook", woke.Turn)
			}
		})
	}
}

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
