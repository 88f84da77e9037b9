package plugin_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/e2e"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestSlashCommandInPrintMode runs `claude -p "/mcp-heal doctor tiny"` with
// the plugin loaded (--plugin-dir) against a stand-in model: the command's
// `!` line must run without a permission prompt, and its report must reach
// the model together with the request to present it.
func TestSlashCommandInPrintMode(t *testing.T) {
	unixOnly(t, shLauncher)
	claude := testenv.NPMBin(t, "claude", testenv.ClaudeCode)
	bin := testenv.Binary(t)
	root := testenv.ModuleRoot(t)
	home := t.TempDir()
	work := filepath.Join(home, "project")
	os.MkdirAll(work, 0o755)
	cfg := fmt.Sprintf(`{"mcpServers":{"tiny":{"command":%q,"args":["example-server"]}}}`, bin)
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// doctor reads the config Claude Code reads: the user scope.
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := e2e.NewModel(e2e.Turn{Text: "tiny is healthy."})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "/mcp-heal doctor tiny", "--output-format", "json",
		"--mcp-config", filepath.Join(home, "mcp.json"), "--plugin-dir", root)
	cmd.Dir = work
	cmd.Env = append(claudeEnv(home), "ANTHROPIC_BASE_URL="+m.URL, "ANTHROPIC_API_KEY=sk-fake", "ENABLE_TOOL_SEARCH=false", "MCP_HEAL_BIN="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p /mcp-heal: %v\n%s", err, out)
	}
	var prompt string
	for _, r := range m.Main() {
		for _, msg := range r.Messages {
			for _, b := range msg.Content {
				prompt += b.Text + "\n"
			}
		}
	}
	for _, want := range []string{"answers: mcp-heal-example", "Present this report to the user"} {
		if !strings.Contains(prompt, want) {
			t.Fatalf("the model's prompt lacks %q:\n%s\nclaude output: %s", want, prompt, out)
		}
	}
	if !strings.Contains(string(out), "tiny is healthy.") {
		t.Fatalf("claude output lacks the model's answer: %s", out)
	}
}

// TestLauncherCommandNamesSlashCommands: run as /mcp-heal (the launcher's
// `command` entry), the binary's advice names what the user can run inside
// Claude Code: `/mcp-heal wrap X`, not an `mcp-heal` binary they may not
// have on PATH. Run directly, the same advice names the binary.
func TestLauncherCommandNamesSlashCommands(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	bin := testenv.Binary(t)
	t.Setenv("MCP_HEAL_BIN", bin)
	proj := filepath.Join(l.home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers":{"tiny":{"command":"` + bin + `","args":["example-server"]}}}`
	if err := os.WriteFile(filepath.Join(l.home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+l.home, "XDG_STATE_HOME="+filepath.Join(l.home, "state"), "CLAUDE_PROJECT_DIR="+proj)

	cmd := launcher(l.root, "command", "status")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Run '/mcp-heal wrap --all'") {
		t.Errorf("/mcp-heal status: %v\n%s", err, out)
	}
	cmd = exec.Command(bin, "status")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Run 'mcp-heal wrap --all'") {
		t.Errorf("mcp-heal status in a shell: %v\n%s", err, out)
	}
}
