package plugin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/sha256sums/sumstest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// releasedPlugin lays out a plugin as the release does (launcher,
// manifest, bin/mcp-heal, bin/mcp-heal-<os>-<arch>, bin/SHA256SUMS, no
// go.mod nor build.sh) with this
// machine's binary, and returns its root and the bundled binary's path.
func releasedPlugin(t *testing.T) (root, bundled string) {
	t.Helper()
	root = t.TempDir()
	copySource(t, root, "plugin/mcp-heal", "plugin/link.sh", "plugin/integrity.sh", "bin/mcp-heal", ".claude-plugin/plugin.json")
	b, err := os.ReadFile(testenv.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	name := "mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH
	bundled = filepath.Join(root, "bin", name)
	os.MkdirAll(filepath.Dir(bundled), 0o755)
	if err := os.WriteFile(bundled, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sums := "0000000000000000000000000000000000000000000000000000000000000000  mcp-heal-plan9-amd64\n" +
		hexSum(b) + "  " + name + "\n"
	if err := os.WriteFile(filepath.Join(root, "bin", "SHA256SUMS"), []byte(sums), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, bundled
}

// copySource copies files (paths in the module) from the module's source
// into root, each to the same path there.
func copySource(t *testing.T, root string, files ...string) {
	t.Helper()
	src := testenv.ModuleRoot(t)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		if err := os.WriteFile(filepath.Join(root, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// hexSum is b's SHA-256 as SHA256SUMS lists it.
func hexSum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// runPlugin runs the launcher of the plugin at root as Claude Code runs
// a hook, without Go on PATH, and fails the test unless it exits 0.
func runPlugin(t *testing.T, root, home string, stdin string, args ...string) (string, string) {
	t.Helper()
	cmd := launcher(root, args...)
	cmd.Env = hookEnv(noGoEnv(home), root, home)
	return runZero(t, cmd, stdin)
}

// TestLauncherVerifiesBundledBinary: a released plugin's binary runs (no
// Go needed) after its SHA-256 matched SHA256SUMS; the verified copy is
// cached, so a later change to the bundled file no longer matters; the
// stable copy is installed.
func TestLauncherVerifiesBundledBinary(t *testing.T) {
	unixOnly(t, shLauncher)
	root, bundled := releasedPlugin(t)
	home := t.TempDir()
	ver := pluginVersion(t)
	if out, errOut := runPlugin(t, root, home, "", "version"); !strings.HasPrefix(out, "mcp-heal ") {
		t.Fatalf("version through the launcher: got %q %q", out, errOut)
	}
	cached := filepath.Join(home, "plugin-data", "bin", "mcp-heal-"+ver)
	if st, err := os.Stat(cached); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("verified copy %s: %v %v, want mode 0700", cached, st, err)
	}
	stable := stableBin(home)
	if out, err := binVersion(stable); err != nil || !strings.HasPrefix(out, "mcp-heal ") {
		t.Fatalf("stable copy: %q %v", out, err)
	}
	// The healthy path trusts the cache and never hashes again.
	os.WriteFile(bundled, []byte("#!/bin/sh\necho tampered\n"), 0o755)
	if out, _ := runPlugin(t, root, home, "", "version"); !strings.HasPrefix(out, "mcp-heal ") {
		t.Fatalf("cached copy not used: got %q", out)
	}
}

// TestLauncherRefusesTamperedBinary: one byte of the bundled binary
// flipped: the launcher never runs it; a hook exits 0 with one line saying
// why (once), the command says it too.
func TestLauncherRefusesTamperedBinary(t *testing.T) {
	unixOnly(t, shLauncher)
	root, bundled := releasedPlugin(t)
	b, _ := os.ReadFile(bundled)
	b[len(b)/2] ^= 0x01
	os.WriteFile(bundled, b, 0o755)
	home := t.TempDir()
	out, _ := runPlugin(t, root, home, `{"hook_event_name":"SessionStart"}`, "hook", "SessionStart")
	want := "mcp-heal: reinstall the plugin (claude plugin install mcp-heal@mcp-heal): the bundled binary bin/mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH + " does not match the plugin's SHA256SUMS, so it was not run"
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, `{"systemMessage":"`+want) {
		t.Fatalf("hook: got %q, want one systemMessage %q", out, want)
	}
	if out, _ := runPlugin(t, root, home, `{}`, "hook", "PostToolUseFailure"); out != "" {
		t.Fatalf("second hook: got %q, want nothing (told once)", out)
	}
	if _, errOut := runPlugin(t, root, home, "", "command", "status"); !strings.Contains(errOut, want) {
		t.Fatalf("command: got %q, want %q", errOut, want)
	}
	ents, _ := os.ReadDir(filepath.Join(home, "plugin-data", "bin"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "mcp-heal") || strings.HasPrefix(e.Name(), ".verify") {
			t.Fatalf("a copy of the tampered binary was left: %s", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "mcp-heal", "bin", "mcp-heal")); err == nil {
		t.Fatal("the tampered binary became the stable copy")
	}
}

// TestLauncherUpgradeKeepsRunningShims: a plugin update brings a new
// version; its first launcher run replaces the stable copy (what wrapped
// servers run) by rename, so a server already running from the old copy
// goes on working, and new starts get the new version.
func TestLauncherUpgradeKeepsRunningShims(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	home := t.TempDir()
	runPlugin(t, root, home, "", "version")
	stable := stableBin(home)
	old, err := os.Stat(stable)
	if err != nil {
		t.Fatal(err)
	}
	// A wrapped server running from the stable copy: the example server,
	// answering on its stdio.
	srv := testenv.StartRPC(t, exec.Command(stable, "example-server"))
	ask := func() string {
		t.Helper()
		r, ok := srv.Request("ping", `{}`, 30*time.Second)
		if !ok {
			t.Fatal("running server: no answer to ping")
		}
		return r.Raw
	}
	if r := ask(); !strings.Contains(r, `"result"`) {
		t.Fatalf("ping before the update: %q", r)
	}

	// The update: the same plugin at a new version.
	setVersion(t, root, "9.9.9")
	runPlugin(t, root, home, "", "version")
	if v, _ := os.ReadFile(stable + ".version"); strings.TrimSpace(string(v)) != "9.9.9" {
		t.Fatalf("stable copy version after the update: %q, want 9.9.9", v)
	}
	now, err := os.Stat(stable)
	if err != nil || os.SameFile(old, now) {
		t.Fatalf("the stable copy was rewritten in place (or is gone: %v); running servers would break", err)
	}
	if r := ask(); !strings.Contains(r, `"result"`) {
		t.Fatalf("ping after the update: %q", r)
	}
	if _, err := os.Stat(filepath.Join(home, "plugin-data", "bin", "mcp-heal-9.9.9")); err != nil {
		t.Fatalf("the new version was not verified into the cache: %v", err)
	}
}

// TestLauncherRefusesUnlistedBinary: a bundled binary without a
// SHA256SUMS, or one the file does not list, is never run.
func TestLauncherRefusesUnlistedBinary(t *testing.T) {
	unixOnly(t, shLauncher)
	for _, c := range []struct{ name, sums, want string }{
		{"no SHA256SUMS", "", "it has no bin/SHA256SUMS to check"},
		{"not listed", "0000000000000000000000000000000000000000000000000000000000000000  mcp-heal-plan9-amd64\n", "does not match the plugin's SHA256SUMS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, _ := releasedPlugin(t)
			sums := filepath.Join(root, "bin", "SHA256SUMS")
			os.Remove(sums)
			if c.sums != "" {
				os.WriteFile(sums, []byte(c.sums), 0o644)
			}
			out, errOut := runPlugin(t, root, t.TempDir(), `{}`, "hook", "SessionStart")
			if strings.Count(out, "\n") != 1 || !strings.Contains(out, c.want) || errOut != "" {
				t.Fatalf("got stdout %q stderr %q, want one systemMessage saying %q and nothing on stderr", out, errOut, c.want)
			}
		})
	}
}

// TestLauncherReadsSumsFiles is issue 16 item 9: a SHA256SUMS whose last
// line has no newline, or with CRLF line ends (a file that went through an
// editor or a Windows checkout), still lets the right binary run; a wrong
// hash in either form is still refused. Before, both rejected the correct
// binary.
func TestLauncherReadsSumsFiles(t *testing.T) {
	unixOnly(t, shLauncher)
	for _, c := range []struct {
		name string
		edit func(sums string) string
		ok   bool
	}{
		{"no final newline", func(s string) string { return strings.TrimSuffix(s, "\n") }, true},
		{"CRLF", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }, true},
		{"CRLF, no final newline", func(s string) string { return strings.TrimSuffix(strings.ReplaceAll(s, "\n", "\r\n"), "\r\n") }, true},
		{"binary mode", func(s string) string { return strings.ReplaceAll(s, "  mcp-heal", " *mcp-heal") }, true},
		{"wrong hash, no final newline", func(s string) string { return strings.TrimSuffix(flipHash(s), "\n") }, false},
		{"wrong hash, CRLF", func(s string) string { return strings.ReplaceAll(flipHash(s), "\n", "\r\n") }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, _ := releasedPlugin(t)
			sums := filepath.Join(root, "bin", "SHA256SUMS")
			b, _ := os.ReadFile(sums)
			os.WriteFile(sums, []byte(c.edit(string(b))), 0o644)
			out, errOut := runPlugin(t, root, t.TempDir(), "", "version")
			if c.ok && !strings.HasPrefix(out, "mcp-heal ") {
				t.Fatalf("got %q %q, want the binary to run", out, errOut)
			}
			if !c.ok && (out != "" || !strings.Contains(errOut, "does not match the plugin's SHA256SUMS")) {
				t.Fatalf("got %q %q, want it refused", out, errOut)
			}
		})
	}
}

// flipHash changes the first hex digit of this platform's line.
func flipHash(sums string) string {
	lines := strings.Split(sums, "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, runtime.GOOS+"-"+runtime.GOARCH) {
			d := "1"
			if l[0] == '1' {
				d = "2"
			}
			lines[i] = d + l[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// TestLauncherDistrustsOpenCacheDir is issue 16 item 9's other half: the
// plugin data dir's bin/ (where the checked copy is cached) found writable
// by others, a symlink, or another user's: the copy found there is never
// run unchecked. An open directory is set back to 0700 and the copy in it
// hashed again (a planted one is removed and the bundled binary checked
// and copied anew); a symlink or a stranger's directory is not used at all
// (the bundled binary is checked where it is). The stable copy's directory
// gets the same treatment. Before, the planted copy ran.
func TestLauncherDistrustsOpenCacheDir(t *testing.T) {
	unixOnly(t, shLauncher)
	for _, c := range []string{"0777", "symlink", "other uid"} {
		t.Run(c, func(t *testing.T) {
			if c == "other uid" && os.Geteuid() != 0 {
				t.Skip("making a directory of another uid needs root; the 0777 and symlink cases run")
			}
			root, bundled := releasedPlugin(t)
			home := t.TempDir()
			ver := pluginVersion(t)
			trace := filepath.Join(home, "planted-ran")
			planted := []byte("#!/bin/sh\ntouch '" + trace + "'\necho planted\n")
			cache := filepath.Join(home, "plugin-data", "bin")
			stableDir := filepath.Dir(stableBin(home))
			os.MkdirAll(filepath.Dir(cache), 0o700)
			elsewhere := filepath.Join(t.TempDir(), "theirs")
			switch c {
			case "0777":
				for _, d := range []string{cache, stableDir} {
					os.MkdirAll(d, 0o777)
					os.Chmod(d, 0o777)
				}
				os.WriteFile(filepath.Join(cache, "mcp-heal-"+ver), planted, 0o755)
				os.WriteFile(filepath.Join(stableDir, "mcp-heal"), planted, 0o755)
				os.WriteFile(filepath.Join(stableDir, "mcp-heal.version"), []byte(ver+"\n"), 0o644)
			case "symlink":
				os.MkdirAll(elsewhere, 0o700)
				os.WriteFile(filepath.Join(elsewhere, "mcp-heal-"+ver), planted, 0o755)
				if err := os.Symlink(elsewhere, cache); err != nil {
					t.Fatal(err)
				}
			case "other uid":
				os.MkdirAll(cache, 0o755)
				os.WriteFile(filepath.Join(cache, "mcp-heal-"+ver), planted, 0o755)
				for _, p := range []string{cache, filepath.Join(cache, "mcp-heal-"+ver)} {
					if err := os.Chown(p, 65534, 65534); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, errOut := runPlugin(t, root, home, "", "version")
			if _, err := os.Stat(trace); err == nil || !strings.HasPrefix(out, "mcp-heal ") {
				t.Fatalf("got %q %q (planted copy ran: %v), want the checked binary", out, errOut, err == nil)
			}
			want, _ := os.ReadFile(bundled)
			switch c {
			case "0777":
				for _, d := range []string{cache, stableDir} {
					if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
						t.Errorf("%s: %v %v, want it set back to 0700", d, st.Mode(), err)
					}
				}
				for _, f := range []string{filepath.Join(cache, "mcp-heal-"+ver), filepath.Join(stableDir, "mcp-heal")} {
					if got, _ := os.ReadFile(f); string(got) != string(want) {
						t.Errorf("%s is not the checked binary", f)
					}
				}
			case "symlink":
				ents, _ := os.ReadDir(elsewhere)
				if len(ents) != 1 {
					t.Errorf("the launcher wrote into the directory the symlink points to: %v", ents)
				}
			}
			// And again, from the cache (or the bundled file) now.
			if out, _ := runPlugin(t, root, home, "", "version"); !strings.HasPrefix(out, "mcp-heal ") {
				t.Fatalf("second run: %q", out)
			}
		})
	}
}

// TestLauncherSumsTable: the sh launcher runs the bundled binary exactly
// when SHA256SUMS lists its hash, on the table internal/sha256sums and the
// Windows launcher are tested on. It compared the listed hash as written,
// so an upper-case SHA256SUMS, which the Windows launcher took, failed
// here (issue 26).
func TestLauncherSumsTable(t *testing.T) {
	unixOnly(t, shLauncher)
	src := testenv.ModuleRoot(t)
	script, err := os.ReadFile(filepath.Join(src, "plugin", "mcp-heal"))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := os.ReadFile(filepath.Join(src, "plugin", "integrity.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// The bundled binary is a script: what is checked is the launcher.
	bin := []byte("#!/bin/sh\necho ran \"$@\"\n")
	sum := hexSum(bin)
	name := "mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH
	for _, c := range sumstest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			root, home := t.TempDir(), t.TempDir()
			for f, data := range map[string][]byte{
				"plugin/mcp-heal":            script,
				"plugin/integrity.sh":        checks,
				".claude-plugin/plugin.json": []byte(`{"name": "mcp-heal", "version": "1.2.3"}`),
				"bin/" + name:                bin,
				"bin/SHA256SUMS":             []byte(c.Expand(sum, name)),
			} {
				os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
				if err := os.WriteFile(filepath.Join(root, f), data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := launcher(root, "version")
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT=" + root, "CLAUDE_PLUGIN_DATA=" + filepath.Join(home, "data")}
			code, out, errOut := testenv.RunCode(t, cmd)
			ran := out == "ran version\n"
			if code != 0 && ran || ran != c.Runs {
				t.Fatalf("exit status %d, ran %v, want ran %v\nstdout %q\nstderr %q", code, ran, c.Runs, out, errOut)
			}
			if !c.Runs && !strings.Contains(errOut, "does not match the plugin's SHA256SUMS") {
				t.Errorf("stderr %q, want it to say the binary does not match", errOut)
			}
		})
	}
}
