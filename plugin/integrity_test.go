package plugin_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// releasedPlugin lays out a plugin as the release does (launcher,
// manifest, bin/mcp-heal-<os>-<arch>, bin/SHA256SUMS, no go.mod) with this
// machine's binary, and returns its root and the bundled binary's path.
func releasedPlugin(t *testing.T) (root, bundled string) {
	t.Helper()
	src := testenv.ModuleRoot(t)
	root = t.TempDir()
	for _, f := range []string{"plugin/mcp-heal", ".claude-plugin/plugin.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		if err := os.WriteFile(filepath.Join(root, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
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
	sum := sha256.Sum256(b)
	sums := "0000000000000000000000000000000000000000000000000000000000000000  mcp-heal-plan9-amd64\n" +
		hex.EncodeToString(sum[:]) + "  " + name + "\n"
	if err := os.WriteFile(filepath.Join(root, "bin", "SHA256SUMS"), []byte(sums), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, bundled
}

func runPlugin(t *testing.T, root, home string, stdin string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "plugin", "mcp-heal"), args...)
	env := claudeEnv(home)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=/usr/bin:/bin" // no Go
		}
	}
	cmd.Env = append(env, "CLAUDE_PLUGIN_ROOT="+root, "CLAUDE_PLUGIN_DATA="+filepath.Join(home, "plugin-data"))
	cmd.Stdin = strings.NewReader(stdin)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("launcher %v: %v (want exit 0)\n%s%s", args, err, o.String(), e.String())
	}
	return o.String(), e.String()
}

// TestLauncherVerifiesBundledBinary: a released plugin's binary runs (no
// Go needed) after its SHA-256 matched SHA256SUMS; the verified copy is
// cached, so a later change to the bundled file no longer matters; the
// stable copy is installed.
func TestLauncherVerifiesBundledBinary(t *testing.T) {
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
	stable := filepath.Join(home, ".local", "share", "mcp-heal", "bin", "mcp-heal")
	if out, err := exec.Command(stable, "version").Output(); err != nil || !strings.HasPrefix(string(out), "mcp-heal ") {
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
	root, bundled := releasedPlugin(t)
	b, _ := os.ReadFile(bundled)
	b[len(b)/2] ^= 0x01
	os.WriteFile(bundled, b, 0o755)
	home := t.TempDir()
	out, _ := runPlugin(t, root, home, `{"hook_event_name":"SessionStart"}`, "hook", "SessionStart")
	want := "mcp-heal: the bundled binary bin/mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH + " does not match the plugin's SHA256SUMS, so it was not run"
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
	root, _ := releasedPlugin(t)
	home := t.TempDir()
	runPlugin(t, root, home, "", "version")
	stable := filepath.Join(home, ".local", "share", "mcp-heal", "bin", "mcp-heal")
	old, err := os.Stat(stable)
	if err != nil {
		t.Fatal(err)
	}
	// A wrapped server running from the stable copy: the example server,
	// answering on its stdio.
	srv := exec.Command(stable, "example-server")
	in, _ := srv.StdinPipe()
	out, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); srv.Wait() }()
	ask := func() string {
		t.Helper()
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			t.Fatalf("running server: %v", err)
		}
		return line
	}
	if r := ask(); !strings.Contains(r, `"result"`) {
		t.Fatalf("ping before the update: %q", r)
	}

	// The update: the same plugin at a new version.
	manifest := filepath.Join(root, ".claude-plugin", "plugin.json")
	b, _ := os.ReadFile(manifest)
	os.WriteFile(manifest, []byte(strings.Replace(string(b), `"version": "`+pluginVersion(t)+`"`, `"version": "9.9.9"`, 1)), 0o644)
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
	for _, c := range []struct{ name, sums, want string }{
		{"no SHA256SUMS", "", "the plugin has no bin/SHA256SUMS to check"},
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
