package plugin_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runNoData runs the released plugin's launcher as a slash command's `!`
// line or the Bash tool does: without CLAUDE_PLUGIN_DATA, which Claude
// Code gives to hooks only (docs/claude-code-behaviour.md).
func runNoData(t *testing.T, root, home string, args ...string) (string, string) {
	t.Helper()
	cmd := launcher(root, args...)
	cmd.Env = append(noGoEnv(home), "CLAUDE_PLUGIN_ROOT="+root)
	return runZero(t, cmd, "")
}

// stableDir lists the stable copy's directory.
func stableDir(t *testing.T, home string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(stableBin(home)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestCommandWithoutPluginDataMakesNoSecondCopy is issue 26's item 4: run
// as `/mcp-heal` runs it (no CLAUDE_PLUGIN_DATA), the launcher took the
// stable copy's directory for its cache and left a second checked copy,
// bin/mcp-heal-<version>, beside the stable one. Now it checks the bundled
// binary on every run (without plugin data there is no record of where
// the binary puts the stable copy, issue 26) and installs the stable copy
// from it, and nothing else.
func TestCommandWithoutPluginDataMakesNoSecondCopy(t *testing.T) {
	unixOnly(t, shLauncher)
	want := []string{"mcp-heal", "mcp-heal.version"}
	t.Run("after a hook", func(t *testing.T) {
		root, _ := releasedPlugin(t)
		home := t.TempDir()
		runPlugin(t, root, home, `{"hook_event_name":"SessionStart"}`, "hook", "SessionStart")
		if out, errOut := runNoData(t, root, home, "command", "version"); !strings.HasPrefix(out, "mcp-heal ") {
			t.Fatalf("command version: got %q %q", out, errOut)
		}
		if got := stableDir(t, home); !slices.Equal(got, want) {
			t.Errorf("stable dir: got %q, want %q", got, want)
		}
	})
	t.Run("first", func(t *testing.T) {
		root, bundled := releasedPlugin(t)
		home := t.TempDir()
		for range 2 {
			if out, errOut := runNoData(t, root, home, "command", "version"); !strings.HasPrefix(out, "mcp-heal ") {
				t.Fatalf("command version: got %q %q", out, errOut)
			}
		}
		if got := stableDir(t, home); !slices.Equal(got, want) {
			t.Errorf("stable dir: got %q, want %q", got, want)
		}
		// Checked on every run: a changed bundled file never runs.
		os.WriteFile(bundled, []byte("#!/bin/sh\necho tampered\n"), 0o755)
		if out, errOut := runNoData(t, root, home, "command", "version"); strings.Contains(out+errOut, "tampered") {
			t.Fatalf("a changed bundled binary ran: %q %q", out, errOut)
		}
	})
}

// TestPathsNamesTheHooksPluginData is the other half of item 4: `mcp-heal
// paths` from the Bash tool (no CLAUDE_PLUGIN_DATA) named the XDG data
// directory as plugin_data, which the hooks do not use. It names the one
// the SessionStart hook recorded, through the launcher and the binary
// alike, and nothing before any hook ran.
func TestPathsNamesTheHooksPluginData(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	home := t.TempDir()
	line := func(out string) string {
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, "plugin_data=") {
				return strings.TrimSpace(l)
			}
		}
		return ""
	}
	if out, _ := runNoData(t, root, home, "paths"); line(out) != "plugin_data=" {
		t.Errorf("before any hook, launcher: got %q, want plugin_data= (unknown)", line(out))
	}
	runPlugin(t, root, home, `{"hook_event_name":"SessionStart"}`, "hook", "SessionStart")
	want := "plugin_data=" + filepath.Join(home, "plugin-data")
	if out, _ := runNoData(t, root, home, "paths"); line(out) != want {
		t.Errorf("launcher: got %q, want %q", line(out), want)
	}
	out, err := output(claudeEnv(home), stableBin(home), "paths")
	if err != nil || line(out) != want {
		t.Errorf("binary: got %q (%v), want %q", line(out), err, want)
	}
}
