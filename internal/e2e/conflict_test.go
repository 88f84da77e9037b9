//go:build unix

package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestConflictingScopesAnswered: `wrap --all` protects an approved
// .mcp.json server with a local entry of the same name, and the real
// `claude mcp list` (pinned and newest) then warns "[Conflicting scopes]"
// for it, and for it only, while it runs through the shim under its own
// name. mcp-heal's outputs answer that warning: wrap says it is expected,
// status shows the server once with the answer.
func TestConflictingScopesAnswered(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	onReleases(t, true, func(t *testing.T, version string) {
		s := newSession(t)
		s.claude = testenv.NPMBin(t, "claude", version)
		bin := testenv.Binary(t)
		mcpJSON := filepath.Join(s.work, ".mcp.json")
		writeJSONFile(t, mcpJSON, map[string]any{"mcpServers": map[string]any{"tiny": map[string]any{"command": bin, "args": []string{"example-server"}}}})
		// Approve it, as Claude Code records an approval.
		path := filepath.Join(s.home, ".claude.json")
		var cfg map[string]any
		readJSONFile(t, path, &cfg)
		cfg["projects"].(map[string]any)[s.work].(map[string]any)["enabledMcpjsonServers"] = []string{"tiny"}
		writeJSONFile(t, path, cfg)

		wrap, err := s.mcpHeal("wrap", "--all", "--shim", bin)
		if err != nil || !strings.Contains(string(wrap), `keep both entries when /mcp warns "[Conflicting scopes]"`) {
			t.Fatalf("wrap: %v\n%s", err, wrap)
		}
		list := s.claudeCLI(t, "mcp", "list")
		if !strings.Contains(list, "[Conflicting scopes]") || !strings.Contains(list, `Server "tiny" is defined in multiple scopes`) ||
			!strings.Contains(list, "tiny: "+bin+" shim --name tiny -- "+bin+" example-server - ✔ Connected") {
			t.Fatalf("claude mcp list after wrap:\n%s", list)
		}
		t.Logf("claude mcp list (%s) after wrap:\n%s", version, list)
		status, err := s.mcpHeal("status")
		if err != nil || strings.Count(string(status), "\ntiny ") != 1 || !strings.Contains(string(status), `tiny: protects the entry of the same name in `+mcpJSON) ||
			!strings.Contains(string(status), `"[Conflicting scopes]" warning about it is expected: keep both entries`) {
			t.Fatalf("status after wrap: %v\n%s", err, status)
		}
	})
}
