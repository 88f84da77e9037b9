package plugin_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// shLauncher is why most of this package's tests do not run on Windows.
const shLauncher = "runs the sh launcher plugin/mcp-heal (or claude, sh scripts), which needs a POSIX sh: Windows runs plugin/mcp-heal.exe, whose tests are plugin/winlauncher's"

// unixOnly skips a test on Windows, saying why.
func unixOnly(t *testing.T, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip(why)
	}
}

// shellEnv is a user's shell (or Claude Code's Bash tool): HOME, a PATH,
// no Go, no CLAUDE_PLUGIN_* variables.
func shellEnv(home, path string) []string {
	return []string{"HOME=" + home, "PATH=" + path}
}

// inShell runs a command line's argv with env and returns its exit code
// and combined output.
func inShell(t *testing.T, env []string, argv ...string) (int, string) {
	t.Helper()
	name := argv[0]
	if !strings.Contains(name, "/") {
		// Looked up in env's PATH, as a shell does, not the test's.
		name = ""
		for _, kv := range env {
			if p, ok := strings.CutPrefix(kv, "PATH="); ok {
				for _, d := range filepath.SplitList(p) {
					if st, err := os.Stat(filepath.Join(d, argv[0])); err == nil && st.Mode()&0o111 != 0 && name == "" {
						name = filepath.Join(d, argv[0])
					}
				}
			}
		}
		if name == "" {
			return 127, argv[0] + ": command not found"
		}
	}
	cmd := exec.Command(name, argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestBashToolHasMcpHeal is issue 18 item 1 for Claude Code's Bash tool:
// Claude Code puts the plugin's bin/ on that tool's PATH, and right after
// install (no hook has run yet, no Go) `mcp-heal` there is the checked
// binary: the plugin's bin/mcp-heal runs the launcher, which verifies the
// bundled binary and installs the stable copy; the binary's exit status is
// kept. Before, bin/ held only mcp-heal-<os>-<arch>: command not found.
func TestBashToolHasMcpHeal(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	home := t.TempDir()
	env := shellEnv(home, filepath.Join(root, "bin")+":/usr/bin:/bin")
	code, out := inShell(t, env, "mcp-heal", "version")
	if code != 0 || !strings.HasPrefix(out, "mcp-heal ") {
		t.Fatalf("mcp-heal version on the Bash tool's PATH: exit %d, %q", code, out)
	}
	if code, out := inShell(t, env, "mcp-heal", "logs", "no-such-server"); code != 2 || !strings.Contains(out, "no-such-server") {
		t.Fatalf("mcp-heal logs no-such-server: exit %d (want the binary's 2), %q", code, out)
	}
	stable := filepath.Join(home, ".local", "share", "mcp-heal", "bin", "mcp-heal")
	if code, out := inShell(t, env, stable, "version"); code != 0 || !strings.HasPrefix(out, "mcp-heal ") {
		t.Fatalf("the stable copy after the first mcp-heal: exit %d, %q", code, out)
	}
	// Run from elsewhere, with another plugin's variables in the
	// environment, it is still this plugin's.
	other := t.TempDir()
	env = append(env, "CLAUDE_PLUGIN_ROOT="+other, "CLAUDE_PLUGIN_DATA="+other)
	if code, out := inShell(t, env, "mcp-heal", "version"); code != 0 || !strings.HasPrefix(out, "mcp-heal ") {
		t.Fatalf("with another plugin's CLAUDE_PLUGIN_ROOT: exit %d, %q", code, out)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Fatalf("it wrote into another plugin's data dir: %v", ents)
	}
}

// TestSlashLink is issue 18 item 1 for the user's own shell: /mcp-heal
// link (the launcher's `command link`) links ~/.local/bin/mcp-heal to the
// stable copy, says how to use it, and says the exact line to add when
// ~/.local/bin is not on PATH (it edits no startup file). The link then
// runs mcp-heal in a shell, and keeps doing so after an update. A file of
// the user's there is never replaced. It always exits 0 (the `!` line).
func TestSlashLink(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	home := t.TempDir()
	link := filepath.Join(home, ".local", "bin", "mcp-heal")
	slash := func(path string) string {
		t.Helper()
		code, out := inShell(t, shellEnv(home, path), filepath.Join(root, "plugin", "mcp-heal"), "command", "link")
		if code != 0 {
			t.Fatalf("/mcp-heal link: exit %d\n%s", code, out)
		}
		return out
	}
	out := slash("/usr/bin:/bin")
	if !strings.Contains(out, "Linked "+link) || !strings.Contains(out, `export PATH="$HOME/.local/bin:$PATH"`) {
		t.Fatalf("/mcp-heal link without ~/.local/bin on PATH: %q", out)
	}
	for _, rc := range []string{".bashrc", ".zshrc", ".profile", ".bash_profile"} {
		if _, err := os.Stat(filepath.Join(home, rc)); err == nil {
			t.Fatalf("/mcp-heal link wrote %s", rc)
		}
	}
	shell := filepath.Dir(link) + ":/usr/bin:/bin"
	if out := slash(shell); !strings.Contains(out, "already links") || !strings.Contains(out, "In a shell, run: mcp-heal status") {
		t.Fatalf("/mcp-heal link again, ~/.local/bin on PATH: %q", out)
	}
	if code, out := inShell(t, shellEnv(home, shell), "mcp-heal", "status"); code != 0 || !strings.Contains(out, "No MCP servers configured") {
		t.Fatalf("mcp-heal status in a shell: exit %d, %q", code, out)
	}

	// An update: the stable copy is replaced, the link runs the new one.
	setVersion(t, root, "9.9.9")
	slash(shell)
	if b, _ := os.ReadFile(filepath.Join(home, ".local", "share", "mcp-heal", "bin", "mcp-heal.version")); strings.TrimSpace(string(b)) != "9.9.9" {
		t.Fatalf("stable copy version after the update: %q", b)
	}
	if code, _ := inShell(t, shellEnv(home, shell), "mcp-heal", "version"); code != 0 {
		t.Fatal("the link no longer runs after an update")
	}

	// A file of the user's is left alone.
	os.Remove(link)
	os.WriteFile(link, []byte("#!/bin/sh\necho mine\n"), 0o755)
	if out := slash(shell); !strings.Contains(out, "exists and is not mcp-heal's link") {
		t.Fatalf("/mcp-heal link over the user's file: %q", out)
	}
	if b, _ := os.ReadFile(link); string(b) != "#!/bin/sh\necho mine\n" {
		t.Fatal("/mcp-heal link replaced the user's file")
	}
}

// TestSlashLinkRefusesOpenDir (issue 24 item 5): /mcp-heal link never
// links into a ~/.local/bin (or ~/.local) that another user owns or could
// write to: whoever can write there could replace what `mcp-heal` runs in
// the user's shell. It says why and how to fix it, and links nothing.
func TestSlashLinkRefusesOpenDir(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	for _, c := range []struct{ name, dir, mode, why string }{
		{"bin open to everyone", ".local/bin", "0777", "can be written by other users (drwxrwxrwx"},
		{"bin open to the group", ".local/bin", "0775", "can be written by other users (drwxrwxr-x"},
		{"sticky .local", ".local", "1777", "can be written by other users (drwxrwxrwt"},
		{"another uid's bin", ".local/bin", "uid", "belongs to another user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, c.dir)
			if err := os.MkdirAll(filepath.Join(home, ".local", "bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if c.mode == "uid" {
				if os.Geteuid() != 0 {
					t.Skip("making a directory of another uid needs root; the mode cases run")
				}
				if err := os.Chown(dir, 4242, 4242); err != nil {
					t.Fatal(err)
				}
			} else {
				m, _ := strconv.ParseUint(c.mode, 8, 32)
				if err := os.Chmod(dir, os.FileMode(m&0o777)|map[bool]os.FileMode{true: os.ModeSticky}[m&0o1000 != 0]); err != nil {
					t.Fatal(err)
				}
			}
			code, out := inShell(t, shellEnv(home, "/usr/bin:/bin"), filepath.Join(root, "plugin", "mcp-heal"), "command", "link")
			if code != 0 || !strings.Contains(out, dir+" "+c.why) || !strings.Contains(out, "nothing was linked") || !strings.Contains(out, "chmod go-w "+dir) {
				t.Errorf("/mcp-heal link: exit %d\n%s\nwant a refusal saying %q", code, out, c.why)
			}
			if _, err := os.Lstat(filepath.Join(home, ".local", "bin", "mcp-heal")); err == nil {
				t.Errorf("it linked into %s", dir)
			}
		})
	}
}

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
