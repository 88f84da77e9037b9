package plugin_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

func payload(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.HookPayloadDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkReply fails unless out is nothing or JSON objects, one a line (what
// Claude Code reads as a hook's answer).
func checkReply(t *testing.T, what, out string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			t.Errorf("%s: stdout line %q is not JSON", what, line)
		}
	}
}

// setVersion rewrites the released plugin's manifest version as JSON
// text (already escaped where JSON needs it).
func setVersion(t *testing.T, root, jsonText string) {
	t.Helper()
	manifest := filepath.Join(root, ".claude-plugin", "plugin.json")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	old := `"version": "` + pluginVersion(t) + `"`
	if !strings.Contains(string(b), old) {
		t.Fatalf("manifest lacks %s", old)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(b), old, `"version": "`+jsonText+`"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCode runs the launcher of the plugin at root like runPlugin and
// returns its exit code instead of failing on a non-zero one.
func runCode(t *testing.T, root, home, stdin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := launcher(root, args...)
	cmd.Env = append(hookEnv(noGoEnv(home), root, home), env...)
	cmd.Dir = home
	cmd.Stdin = strings.NewReader(stdin)
	return testenv.RunCode(t, cmd)
}

// TestLauncherHostileVersions is issue 16 item 4's other half: a plugin
// version holding "/", "..", a newline, spaces, or too long for a file
// name never becomes a path. Every hook exits 0 and answers (the released
// binary is checked and runs), the command and the CLI work, and nothing
// is written outside the plugin data dir, the stable copy's dir and the
// state dir. Before, "/" or ".." or a long version made the cache path
// point nowhere and the first hook ended with status 2.
func TestLauncherHostileVersions(t *testing.T) {
	unixOnly(t, shLauncher)
	for name, v := range map[string]string{
		"slash":     "1.0/evil",
		"dotdot":    "../../../../tmp/mcp-heal-evil",
		"newline":   `1.0\nevil`,
		"raw-nl":    "1.0\nevil",
		"spaces":    "1 2 3",
		"long":      strings.Repeat("9", 300),
		"dot":       ".",
		"glob":      "*",
		"dash-flag": "-rf",
	} {
		t.Run(name, func(t *testing.T) {
			root, _ := releasedPlugin(t)
			setVersion(t, root, v)
			home := t.TempDir()
			att := filepath.Join(home, ".local", "state", "mcp-heal", "attention")
			os.MkdirAll(att, 0o700)
			os.WriteFile(filepath.Join(att, "shim-1"), nil, 0o600) // PreToolUse past its fast path
			for _, r := range []struct {
				stdin string
				args  []string
			}{
				{payload(t, "SessionStart.json"), []string{"hook", "SessionStart"}},
				{payload(t, "PreToolUse.mcp.json"), []string{"hook", "PreToolUse"}},
				{payload(t, "PostToolUseFailure.stdio-not-connected.json"), []string{"hook", "PostToolUseFailure"}},
				{"", []string{"command", "status"}},
				{"", []string{"version"}},
			} {
				code, out, errOut := runCode(t, root, home, r.stdin, nil, r.args...)
				if code != 0 {
					t.Fatalf("%v: exit %d, want 0\nstdout: %s\nstderr: %s", r.args, code, out, errOut)
				}
				if r.args[0] == "hook" {
					checkReply(t, r.args[1], out)
				}
				if r.args[len(r.args)-1] == "PostToolUseFailure" && !strings.Contains(out, "/mcp reconnect tiny") {
					t.Errorf("PostToolUseFailure did not answer: %q %q", out, errOut)
				}
				if r.args[0] == "version" && !strings.HasPrefix(out, "mcp-heal ") {
					t.Errorf("version: got %q %q", out, errOut)
				}
			}
			// Files directly in the two bin dirs, anything in the state dir.
			filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
				rel, _ := filepath.Rel(home, p)
				if err != nil || d.IsDir() {
					return nil
				}
				dir := filepath.Dir(rel)
				ok := dir == "plugin-data/bin" || dir == ".local/share/mcp-heal/bin" || strings.HasPrefix(rel, ".local/state/mcp-heal/")
				if !ok || strings.Contains(rel, "evil") {
					t.Errorf("the launcher wrote %s", rel)
				}
				return nil
			})
			if _, err := os.Lstat("/tmp/mcp-heal-evil"); err == nil {
				t.Errorf("a version escaped the data dir: /tmp/mcp-heal-evil exists")
			}
			if _, err := binVersion(stableBin(home)); err != nil {
				t.Errorf("no stable copy: %v", err)
			}
		})
	}
}

// TestLauncherHookIgnoresBinaryExitStatus: a hook's exit status is for
// Claude Code to read, and 2 blocks the call; the binary never exits
// non-zero on purpose in a hook, but a Go runtime crash (a stack overflow,
// an out-of-memory) exits 2, and a binary that cannot be executed makes
// exec fail. Whatever the binary did, the hook exits 0; run as a command
// in a shell, its status is kept.
func TestLauncherHookIgnoresBinaryExitStatus(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	home := t.TempDir()
	dir := t.TempDir()
	crash := filepath.Join(dir, "crash")
	os.WriteFile(crash, []byte("#!/bin/sh\necho 'fatal error: stack overflow' >&2\nexit 2\n"), 0o755)
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte{0x7f, 'E', 'L', 'F', 0, 0}, 0o755) // exec fails: ENOEXEC
	att := filepath.Join(home, ".local", "state", "mcp-heal", "attention")
	os.MkdirAll(att, 0o700)
	os.WriteFile(filepath.Join(att, "shim-1"), nil, 0o600)
	for _, bin := range []string{crash, noexec} {
		for _, event := range []string{"SessionStart", "PreToolUse", "PostToolUseFailure"} {
			code, out, errOut := runCode(t, root, home, "{}", []string{"MCP_HEAL_BIN=" + bin}, "hook", event)
			if code != 0 {
				t.Errorf("%s with %s: exit %d, want 0\n%s%s", event, filepath.Base(bin), code, out, errOut)
			}
		}
	}
	if code, _, _ := runCode(t, root, home, "", []string{"MCP_HEAL_BIN=" + crash}, "version"); code != 2 {
		t.Errorf("the CLI through the launcher: exit %d, want the binary's 2", code)
	}
}
