package plugin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

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
