//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// Scenario 7: an unwrapped stdio server dies and Claude Code's respawn
// fails (it tries twice within milliseconds, then never again in the
// session). The PostToolUseFailure hook's context reaches the model with
// the reconnect instruction, and `/mcp-heal status`, run in the same
// session, reports the server as failed. An interactive session drops the
// server's tools after the failure, so the next call is refused as "No such
// tool available" with Claude Code's own words (no hook sees that call;
// the model already has the instruction).
func scenarioRespawnFailed(t *testing.T, m mode, interactive bool) outcome {
	ex := &failingStarts{fails: 20} // more than Claude Code ever tries
	s := newModeSession(t, m,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
		ex.killTurn("after the kill", 300*time.Millisecond),
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "again"})}},
		Turn{Text: "The ex server is down."},
		// Whatever comes next (the status report) gets "Done.".
	)
	s.userScope = true
	ex.add(s, false)
	refused := func() bool {
		r := s.model.ForTurn(3)
		if r == nil {
			return false
		}
		tr, _ := r.ToolResult(ToolUseID(2, 0))
		return strings.HasPrefix(strings.TrimSpace(tr.Text), "<tool_use_error>")
	}
	steps := []step{{Prompt: "Echo through the ex server.", Until: 3}, {Prompt: "/mcp-heal status", Want: statusPrompt}}
	if m == alone {
		steps = steps[:1] // no plugin, no /mcp-heal
		steps[0].Want = nil
	}
	r := s.driveSteps(interactive, steps...)
	o := logCalls(t, s.model, ToolUseID(1, 0))
	if o.Failed > 0 {
		o.Note = toldToReconnect(s.model, "ex")
	}
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
	wantReconnectAdvice(t, hc["PostToolUseFailure:mcp__ex__echo"], "ex", interactive)
	third := mustResult(t, s.model, 3, ToolUseID(2, 0))
	t.Logf("third call (interactive=%v): %q", interactive, third.Text)
	if refused() && !strings.Contains(third.Text, "has disconnected") {
		t.Errorf("the third call was refused without Claude Code saying the server disconnected: %q", third.Text)
	}
	// The slash command expands into the prompt of a request of its own:
	// the model sees the report.
	sr := s.model.Find(statusPrompt)
	if sr == nil {
		t.Fatalf("the /mcp-heal status prompt never reached the model")
	}
	report := sr.UserText()
	t.Logf("status report the model saw (request answered with turn %d):\n%s", sr.Turn, report)
	if !statusSaysFailed(report, "ex") {
		t.Errorf("/mcp-heal status did not report ex as failed; the model saw:\n%s", report)
	}
	// Its advice fits the session: `/mcp reconnect` is refused in -p.
	if interactive != strings.Contains(report, "run /mcp reconnect ex") || !interactive && !strings.Contains(report, "this headless (-p) session cannot reconnect it") {
		t.Errorf("/mcp-heal status (interactive %v) gives advice for another kind of session:\n%s", interactive, report)
	}
	if r != nil {
		wantHooksRan(t, r, "PreToolUse", "PostToolUseFailure")
	}
	return o
}

// statusPrompt holds for the request carrying `/mcp-heal status`'s report.
func statusPrompt(r *Request) bool {
	return strings.Contains(r.UserText(), "<command-args>status</command-args>")
}

// toldToReconnect says, for the report, whether any request told the model
// to have the user run `/mcp reconnect server`.
func toldToReconnect(m *Model, server string) string {
	for _, r := range m.Main() {
		if strings.Contains(r.Context(), "/mcp reconnect "+server) {
			return "the model is told to ask for `/mcp reconnect " + server + "`"
		}
		if c := r.Context(); strings.Contains(c, `"`+server+`"`) && (strings.Contains(c, "headless (-p) session cannot reconnect it") || strings.Contains(c, "then start a new session")) {
			return "the model is told this `-p` session cannot reconnect it and the next session starts it afresh"
		}
	}
	return "the model is told nothing beyond the error"
}

// wantReconnectAdvice checks the advice after Claude Code gave server up:
// `/mcp reconnect server` in an interactive session; in `-p`, where Claude
// Code refuses that command, never that, but that a new session starts
// it afresh.
func wantReconnectAdvice(t *testing.T, ctx, server string, interactive bool) {
	t.Helper()
	if interactive {
		if !strings.Contains(ctx, "/mcp reconnect "+server) {
			t.Errorf("hook context %q, want the `/mcp reconnect %s` instruction", ctx, server)
		}
		return
	}
	if strings.Contains(ctx, "/mcp reconnect "+server) || !(strings.Contains(ctx, "headless (-p) session cannot reconnect it") || strings.Contains(ctx, "then start a new session")) {
		t.Errorf("hook context in -p %q, want no `/mcp reconnect %s` but the next session", ctx, server)
	}
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

// Scenario 8: `/mcp-heal doctor` and `/mcp-heal wrap --dry-run` run as
// prompts of a -p session and their reports reach the model; the dry run
// changes nothing.
func TestScenario8Commands(t *testing.T) {
	t.Parallel()
	s := newModeSession(t, hooksOnly,
		Turn{Text: "Here is the doctor's report."},
		Turn{Text: "Here is what wrap would change."},
	)
	s.userScope = true
	s.addExample("good", false, nil)
	s.addExample("broken", false, nil, "--fail-starts", "1000", "--fail-file", dataFile(s, "starts"))
	before := userServers(t, s)
	s.driveSteps(false,
		step{Prompt: "/mcp-heal doctor", Until: 0},
		step{Prompt: "/mcp-heal wrap --all --dry-run", Until: 1},
	)
	doctor := s.model.ForTurn(0).UserText()
	t.Logf("doctor report the model saw:\n%s", doctor)
	for _, want := range []string{"<command-args>doctor</command-args>", "broken", "simulated start failure"} {
		if !strings.Contains(doctor, want) {
			t.Errorf("the doctor report the model saw lacks %q", want)
		}
	}
	if strings.Contains(doctor, "not implemented") {
		t.Errorf("doctor is not implemented; the model saw:\n%s", doctor)
	}
	dry := s.model.ForTurn(1).UserText()
	t.Logf("wrap --dry-run report the model saw:\n%s", dry)
	for _, want := range []string{"<command-args>wrap --all --dry-run</command-args>", "good", "broken", "shim"} {
		if !strings.Contains(dry, want) {
			t.Errorf("the wrap --dry-run report the model saw lacks %q", want)
		}
	}
	if after := userServers(t, s); after != before {
		t.Errorf("wrap --dry-run changed the user's servers:\nbefore %s\nafter  %s", before, after)
	}
}

// userServers returns the mcpServers of ~/.claude.json as JSON.
func userServers(t *testing.T, s *session) string {
	t.Helper()
	if !s.configured {
		s.writeClaudeJSON()
		s.configured = true
	}
	b, err := os.ReadFile(filepath.Join(s.home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(cfg.MCPServers, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

// Scenario 9: the plugin is installed from the repository as a local
// marketplace (`claude plugin marketplace add`, `claude plugin install`) in
// a throwaway HOME, with no MCP_HEAL_BIN: its launcher finds mcp-heal at
// the stable path a previous install left (seeded here with the test
// build, so that the session does not wait minutes for a cold
// `go build -trimpath`). A first session uses its hooks (after a failed
// respawn the PostToolUseFailure context reaches the model) and runs
// `/mcp-heal wrap --all`; the next session runs the server through the
// shim the real command configured, and a kill between calls goes unseen.
func TestScenario9Marketplace(t *testing.T) {
	t.Parallel()
	ex := &failingStarts{fails: 20} // every start after the kill fails
	s := newSession(t,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
		ex.killTurn("after the kill", 300*time.Millisecond),
		Turn{Text: "The ex server is down."},
		Turn{Text: "Here is what wrap did."},
	)
	s.userScope = true
	root := testenv.ModuleRoot(t)
	for _, args := range [][]string{
		{"plugin", "marketplace", "add", root},
		{"plugin", "install", "mcp-heal@mcp-heal"},
	} {
		t.Logf("claude %s: %s", strings.Join(args, " "), strings.TrimSpace(s.claudeCLI(t, args...)))
	}
	seedStableBinary(t, s)
	ex.add(s, false)
	r := s.driveSteps(false, step{Prompt: "Echo through the ex server.", Until: 2}, step{Prompt: "/mcp-heal wrap --all", Until: 3})
	logCalls(t, s.model, ToolUseID(1, 0))
	wantOK(t, "call before the kill", mustResult(t, s.model, 1, ToolUseID(0, 0)), "before")
	hc := s.model.ForTurn(2).HookContext()
	// A -p session: `/mcp reconnect` is refused there, so the advice is a
	// fix and a new session (TestHeadlessGiveUp), whatever installed it.
	// The hook runs nothing (issue 24), so the same words as there.
	if ctx := hc["PostToolUseFailure:mcp__ex__echo"]; !strings.Contains(ctx, `MCP server "ex" is disconnected`) || !strings.HasSuffix(ctx, "the next session starts it afresh.") || strings.Contains(ctx, "run `/mcp reconnect") {
		t.Errorf("the installed plugin's PostToolUseFailure context is %q, want the next session, and no `run /mcp reconnect` (refused in -p)", ctx)
	}
	wantHooksRan(t, r, "SessionStart", "PreToolUse", "PostToolUseFailure")
	t.Logf("wrap report the model saw:\n%s", s.model.ForTurn(3).UserText())
	wrapped := userServers(t, s)
	if !strings.Contains(wrapped, `"shim"`) {
		t.Fatalf("after /mcp-heal wrap --all the user's servers are %s, want ex run through mcp-heal shim", wrapped)
	}

	// A new session: the server runs through the shim wrap configured.
	ex.works(t)
	s.newConversation(
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "wrapped"})}},
		Turn{
			Before: func() error {
				p, err := s.killServer(exampleMatch)
				if err != nil {
					return err
				}
				return s.waitShim("ex", 20*time.Second, func(r *state.Record) bool {
					return r.State == state.Running && r.ChildPID != 0 && r.ChildPID != p.PID
				})
			},
			Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after the kill"})},
		},
		Turn{Text: "Both answered."},
	)
	r = s.drive(false, "Echo through the ex server again.", 2)
	logCalls(t, s.model, ToolUseID(1, 0))
	wantOK(t, "first call through the shim", mustResult(t, s.model, 1, ToolUseID(0, 0)), "wrapped")
	wantOK(t, "call after the kill", mustResult(t, s.model, 2, ToolUseID(1, 0)), "after the kill")
	wantHooksRan(t, r, "SessionStart", "PreToolUse")
}

// seedStableBinary puts the test build where the plugin launcher looks for
// an installed mcp-heal of the plugin's version:
// $XDG_DATA_HOME/mcp-heal/bin/mcp-heal with its .version beside it.
func seedStableBinary(t *testing.T, s *session) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil || manifest.Version == "" {
		t.Fatalf("plugin.json has no version: %v", err)
	}
	dir := filepath.Join(s.home, ".local", "share", "mcp-heal", "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(testenv.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp-heal"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp-heal.version"), []byte(manifest.Version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The launcher has no path rule of its own (issue 26: the binary's
	// paths, from adrg/xdg): a source checkout first runs the copy that a
	// previous session's build left in the plugin's data dir, else it
	// builds. Seed that copy too, as a previous session would have left it.
	cache := filepath.Join(s.home, ".claude", "plugins", "data", "mcp-heal-mcp-heal", "bin")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "mcp-heal-"+manifest.Version), bin, 0o755); err != nil {
		t.Fatal(err)
	}
}
