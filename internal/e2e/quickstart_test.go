//go:build unix

package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// slash runs one /mcp-heal line in a new `claude -p` session of s and
// returns the report the model was given.
func (s *session) slash(t *testing.T, line string) string {
	t.Helper()
	s.newConversation(Turn{Text: "Done."})
	if r := s.runP([]string{line}, 3*time.Minute); r.Err != nil {
		t.Fatalf("claude -p %q: %v\n%s", line, r.Err, r.Stderr)
	}
	return s.model.ForTurn(0).UserText()
}

// TestReleasedQuickStartAndUninstall is issue 18 items 1 and 5 with the
// real CLI (the newest release, 2.1.332), a fresh HOME, the released
// plugin and no Go: the README's quick start run line by line works as
// written (the Bash tool has `mcp-heal` right after install; /mcp-heal
// link gives the user's shell one; wrap in a shell; /mcp-heal status, its
// notes one a line; an interactive session runs the plugin's monitor; wrap
// --keep after wrap --all keeps), and the README's uninstall, run line by
// line after a --keep server was kept, leaves no process of that HOME and
// no file of mcp-heal's.
func TestReleasedQuickStartAndUninstall(t *testing.T) {
	testenv.NeedsFull(t, "the release step and Claude Code")
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Fatalf("this test reads /proc: %v", err)
	}
	dir := releaseMarketplace(t)
	bash := Turn{Tools: []ToolUse{{Name: "Bash", Input: map[string]any{"command": "mcp-heal version", "description": "mcp-heal's version"}}}}
	s := newSession(t, bash, Turn{Text: "Done."})
	s.claude = testenv.NPMBin(t, "claude", testenv.ClaudeCode332) // the newest release
	s.userScope = true
	s.servers["tiny"] = map[string]any{"command": testenv.Binary(t), "args": []string{"example-server"}}
	s.writeClaudeJSON()
	s.configured = true
	s.allow = []string{"Bash(mcp-heal:*)"}
	// A run that fails half-way leaves the kept server of its HOME: stop
	// what runs there (only processes of this test's HOME).
	t.Cleanup(func() { killProcessesOf(s.home) })
	before, err := os.ReadFile(filepath.Join(s.home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}

	// Install: /plugin marketplace add, /plugin install.
	root, _ := installRelease(t, s, dir)
	if _, err := os.Stat(filepath.Join(root, "monitors", "monitors.json")); err != nil {
		t.Errorf("the installed plugin has no monitor: %v", err)
	}

	// 1. A new session. Its Bash tool has mcp-heal, the checked binary.
	r := s.runP([]string{"What version of mcp-heal is this?"}, 3*time.Minute)
	if r.Err != nil {
		t.Fatalf("first session: %v\n%s", r.Err, r.Stderr)
	}
	calls := s.model.Calls()
	if len(calls) != 1 || !calls[0].OK() || !strings.HasPrefix(calls[0].Result.Text, "mcp-heal 0.1.0") {
		t.Fatalf("`mcp-heal version` in the Bash tool right after install: %+v", calls)
	}
	var told bool
	for _, h := range r.hooks() {
		told = told || h.Event == "SessionStart" && strings.Contains(h.Stdout, "not protected against crashes and hangs: tiny")
	}
	if !told {
		t.Errorf("the first SessionStart did not say tiny is not protected: %+v", r.hooks())
	}

	// 2. /mcp-heal link, then the shell lines.
	if out := s.slash(t, "/mcp-heal link"); !strings.Contains(out, "Linked "+filepath.Join(s.home, ".local", "bin", "mcp-heal")) {
		t.Fatalf("/mcp-heal link: the model saw:\n%s", out)
	}
	if out := s.shellLine(t, "mcp-heal wrap --all --dry-run"); !strings.Contains(out, "tiny: would be wrapped") {
		t.Fatalf("mcp-heal wrap --all --dry-run:\n%s", out)
	}
	if out := s.shellLine(t, "mcp-heal wrap --all"); !strings.Contains(out, "tiny: wrapped") {
		t.Fatalf("mcp-heal wrap --all:\n%s", out)
	}
	// 3. /mcp-heal status: its notes one a line (issue 26: they printed
	// on one line, joined by a literal \n).
	if out := s.slash(t, "/mcp-heal status"); !strings.Contains(out, "tiny") || strings.Contains(out, "exited with status") || strings.Contains(out, `\n`) {
		t.Fatalf("/mcp-heal status: the model saw:\n%s", out)
	}

	// An interactive session of the installed plugin (user scope): Claude
	// Code starts its monitor through the installed launcher.
	ts := s.startInteractive(readyPrompt, time.Minute)
	s.waitMonitor(t)
	ts.quit()

	// A kept server (docs/keeper.md): wrap --keep on the entry wrap --all
	// wrapped sets --keep and says so; then a session that uses it: it
	// outlives the session.
	if out := s.shellLine(t, "mcp-heal wrap --all --keep 10m"); !strings.Contains(out, "tiny: --keep set") || !strings.Contains(out, "was not kept") {
		t.Fatalf("mcp-heal wrap --all --keep 10m after wrap --all:\n%s", out)
	}
	s.newConversation(Turn{Tools: []ToolUse{{Name: "mcp__tiny__echo", Input: map[string]any{"text": "hi"}}}}, Turn{Text: "Done."})
	if r := s.runP([]string{"echo hi"}, 3*time.Minute); r.Err != nil || len(s.model.Calls()) != 1 || !s.model.Calls()[0].OK() {
		t.Fatalf("a call through the kept server: %v %+v\n%s", r.Err, s.model.Calls(), r.Stderr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(processesOf(s.home)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(processesOf(s.home)) == 0 {
		t.Fatal("no kept server ran on after the session")
	}

	// Uninstall, as the README says.
	if out := s.slash(t, "/mcp-heal unwrap --all"); !strings.Contains(out, "tiny: unwrapped") || !strings.Contains(out, "stopped its kept server") {
		t.Fatalf("/mcp-heal unwrap --all: the model saw:\n%s", out)
	}
	s.slash(t, "/mcp-heal stop --all")
	s.claudeCLI(t, "plugin", "uninstall", "mcp-heal@mcp-heal")
	s.claudeCLI(t, "plugin", "marketplace", "remove", "mcp-heal")
	s.shellLine(t, "rm -rf ~/.local/share/mcp-heal ~/.local/state/mcp-heal ~/.local/bin/mcp-heal ~/.claude/plugins/cache/mcp-heal")

	deadline = time.Now().Add(10 * time.Second)
	for len(processesOf(s.home)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if ps := processesOf(s.home); len(ps) > 0 {
		t.Errorf("processes left after the uninstall:\n%s", strings.Join(ps, "\n"))
	}
	var left []string
	filepath.WalkDir(s.home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(strings.ToLower(d.Name()), "mcp-heal") {
			left = append(left, strings.TrimPrefix(p, s.home+"/"))
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("files left after the uninstall: %v", left)
	}
	after, _ := os.ReadFile(filepath.Join(s.home, ".claude.json"))
	if bytes.Contains(after, []byte(`"shim"`)) || !bytes.Contains(after, before[bytes.Index(before, []byte(`"tiny"`)):bytes.Index(before, []byte(`"args"`))]) {
		t.Errorf("~/.claude.json does not hold tiny as it was before wrap:\n%s", after)
	}
	// (settings.json keeps the test's own "Bash(mcp-heal:*)" rule.)
	for f, name := range map[string]string{".claude/settings.json": "mcp-heal@", ".claude/plugins/known_marketplaces.json": `"mcp-heal"`, ".claude/plugins/installed_plugins.json": "mcp-heal@"} {
		if b, err := os.ReadFile(filepath.Join(s.home, f)); err == nil && bytes.Contains(b, []byte(name)) {
			t.Errorf("~/%s still names mcp-heal:\n%s", f, b)
		}
	}
}
