//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policyCLI is a home whose user settings hold settings (Claude Code's
// MCP policy) and whose user scope defines "x", a command that leaves a
// mark when run and then fails.
func policyCLI(t *testing.T, settings string) (c *healCLI, mark string) {
	t.Helper()
	mark = filepath.Join(t.TempDir(), "x-ran")
	c = newHealCLI(t, fmt.Sprintf(`{"x":{"command":"/bin/sh","args":["-c","echo ran >> %s; exit 1"]}}`, mark))
	dir := filepath.Join(c.vars["HOME"], ".claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	return c, mark
}

// TestWrapKeepsPolicy: wrap never changes what Claude Code runs or blocks.
// An entry deniedMcpServers blocks by name, command or URL is left as it is
// (wrapped, a command or URL rule would no longer match it: measured with
// Claude Code 2.1.332), and so is one whose wrapped form an allowlist of
// commands would refuse; each says why in one line. doctor and heal list
// a denied entry as not run and never run it.
func TestWrapKeepsPolicy(t *testing.T) {
	for name, tc := range map[string]struct{ settings, why string }{
		"denied by name":    {`{"deniedMcpServers":[{"serverName":"x"}]}`, "x: skipped (user, ~/.claude.json): left alone: Claude Code's policy blocks it (deniedMcpServers in @HOME@/.claude/settings.json blocks it by serverName)"},
		"denied by command": {`{"deniedMcpServers":[{"serverCommand":["/bin/sh","-c","echo ran >> @MARK@; exit 1"]}]}`, "blocks it by serverCommand"},
		"allowed by command": {`{"allowedMcpServers":[{"serverCommand":["/bin/sh","-c","echo ran >> @MARK@; exit 1"]}]}`,
			"x: skipped (user, ~/.claude.json): left alone: wrapped, Claude Code would not run it: allowedMcpServers in @HOME@/.claude/settings.json does not admit it (the mcp-heal shim's command is not listed)"},
	} {
		t.Run(name, func(t *testing.T) {
			c, mark := policyCLI(t, "")
			settings := strings.NewReplacer("@MARK@", mark).Replace(tc.settings)
			os.WriteFile(filepath.Join(c.vars["HOME"], ".claude", "settings.json"), []byte(settings), 0o600)
			cfg := filepath.Join(c.vars["HOME"], ".claude.json")
			before, _ := os.ReadFile(cfg)
			code, out, errOut := c.run("", "wrap", "--all", "--shim", "/opt/mh/mcp-heal")
			after, _ := os.ReadFile(cfg)
			why := strings.NewReplacer("@HOME@", c.vars["HOME"], "@MARK@", mark).Replace(tc.why)
			if string(after) != string(before) || !strings.Contains(out, why) {
				t.Fatalf("wrap --all: exit %d, config changed %v, want it to say %q:\n%s%s", code, string(after) != string(before), why, out, errOut)
			}
			if name == "allowed by command" {
				return // Claude Code runs it: doctor may probe it
			}
			for _, args := range [][]string{{"doctor", "--timeout", "5s"}, {"heal", "--timeout", "5s"}, {"doctor", "x"}} {
				_, out, _ := c.run("", args...)
				if _, err := os.Stat(mark); err == nil {
					t.Fatalf("%s ran the denied x:\n%s", args[0], out)
				}
				if !strings.Contains(out, "not run: deniedMcpServers") {
					t.Errorf("%s does not say x is not run:\n%s", args[0], out)
				}
			}
		})
	}
}

// TestShimRefusesDenied: an entry wrapped before a deny rule by command
// was written: Claude Code runs the shim (the rule matches the entry as
// written), so the shim itself refuses to start the command, saying why;
// status names the entry as blocked, and SessionStart names it.
func TestShimRefusesDenied(t *testing.T) {
	c, mark := policyCLI(t, "")
	if code, out, errOut := c.run("", "wrap", "x", "--shim", "/opt/mh/mcp-heal"); code != 0 || !strings.Contains(out, "x: wrapped") {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, errOut)
	}
	rule := fmt.Sprintf(`{"deniedMcpServers":[{"serverCommand":["/bin/sh","-c","echo ran >> %s; exit 1"]}]}`, mark)
	os.WriteFile(filepath.Join(c.vars["HOME"], ".claude", "settings.json"), []byte(rule), 0o600)

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	code, _, errOut := c.run(initialize, "shim", "--name", "x", "--max-failures", "1", "--", "/bin/sh", "-c", "echo ran >> "+mark+"; exit 1")
	if _, err := os.Stat(mark); err == nil || code == 0 || !strings.Contains(errOut, `not starting MCP server "x": Claude Code's policy blocks it: deniedMcpServers in`) {
		t.Fatalf("shim: exit %d, ran %v, stderr %q", code, err == nil, errOut)
	}
	_, out, _ := c.run("", "status")
	if !strings.Contains(out, "blocked") || !strings.Contains(out, "the shim refuses to start it") {
		t.Errorf("status does not name x as blocked:\n%s", out)
	}
	_, out, _ = c.run(`{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`, "hook", "SessionStart")
	if !strings.Contains(out, "blocked by Claude Code's policy") || !strings.Contains(out, "blocked by Claude Code's policy: x.") {
		t.Errorf("SessionStart does not name x:\n%s", out)
	}
}
