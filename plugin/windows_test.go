package plugin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneHooksFileForEveryPlatform holds the Windows design of
// docs/install.md in place. There is no per-OS command in hooks.json, so
// every hook runs "${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal" in exec form
// (args present): no shell, so the same line works with Git Bash, with
// PowerShell only, and on unix without a shell's start-up cost before
// every MCP call. The name has no extension: on Windows, Claude Code's
// spawn (libuv) tries it with .com, then .exe, appended, which finds the
// Windows launcher the release puts beside the sh script
// (release.WindowsLauncher). A shell form, a .sh name or an extension
// would break one platform or the other.
func TestOneHooksFileForEveryPlatform(t *testing.T) {
	root := ".." // tests run in the package directory: no go needed (Wine, Windows)
	b, err := os.ReadFile(filepath.Join(root, "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string    `json:"type"`
				Command string    `json:"command"`
				Args    *[]string `json:"args"`
				Shell   string    `json:"shell"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &hooks); err != nil {
		t.Fatal(err)
	}
	n := 0
	for event, ms := range hooks.Hooks {
		for _, m := range ms {
			for _, h := range m.Hooks {
				n++
				if h.Type != "command" || h.Command != "${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal" || h.Args == nil || h.Shell != "" {
					t.Errorf("%s hook: type %q command %q args %v shell %q; want exec form of ${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal", event, h.Type, h.Command, h.Args, h.Shell)
				}
				if h.Args != nil && (len(*h.Args) != 2 || (*h.Args)[0] != "hook" || (*h.Args)[1] != event) {
					t.Errorf("%s hook: args %q, want [hook %s]", event, *h.Args, event)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("hooks.json has no hooks")
	}
	// The command's `!` line runs in the Bash tool (Git Bash on Windows)
	// or, without Git Bash, the PowerShell tool: both are allowed the one
	// line, which names the same extensionless launcher.
	cmd, err := os.ReadFile(filepath.Join(root, "commands", "mcp-heal.md"))
	if err != nil {
		t.Fatal(err)
	}
	const line = "${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal command"
	for _, want := range []string{"Bash(" + line + ":*)", "PowerShell(" + line + ":*)", "!`" + line + " $ARGUMENTS`"} {
		if !strings.Contains(string(cmd), want) {
			t.Errorf("commands/mcp-heal.md lacks %s", want)
		}
	}
}
