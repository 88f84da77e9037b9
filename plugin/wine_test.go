//go:build unix

// The Wine tests run Windows programs under Wine from a unix host.

package plugin_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// bunWindows is Bun for Windows, the runtime Claude Code is built on
// (its Windows build spawns hooks through it).
const bunWindows = "@oven/bun-windows-x64-baseline@1.4.4"

// installOnce makes dir with fill (into a temporary sibling, renamed into
// place), once per cache: parallel test binaries each fill their own and
// the first rename wins.
func installOnce(t *testing.T, dir string, fill func(tmp string)) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return dir
	}
	os.MkdirAll(filepath.Dir(dir), 0o755)
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	fill(tmp)
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".installed")); serr != nil {
			t.Fatalf("install %s: %v", dir, err)
		}
	}
	return dir
}

func runOK(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// bunExe installs Bun for Windows from npm and returns its bun.exe.
func bunExe(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is required: %v", err)
	}
	bunDir := installOnce(t, filepath.Join(testenv.CacheDir(), "npm-windows", strings.NewReplacer("@", "", "/", "_").Replace(bunWindows)), func(tmp string) {
		os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"mcp-heal-test-deps","private":true}`), 0o644)
		// --force: the package is for win32; it runs under Wine here.
		runOK(t, os.Environ(), npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--force", "--prefix", tmp, bunWindows)
	})
	return filepath.Join(bunDir, "node_modules", "@oven", "bun-windows-x64-baseline", "bin", "bun.exe")
}

// bunResult is what testdata/bunspawn.js reports.
type bunResult struct {
	Stdout string `json:"stdout"`
	Status *int   `json:"status"`
	Error  string `json:"error"`
}

func (r bunResult) ok() bool { return r.Error == "" && r.Status != nil && *r.Status == 0 }

// bunSpawn runs command with args under Wine as Claude Code spawns an
// exec-form hook (testdata/bunspawn.js), with env added and input (a
// file, or "") on its stdin.
func bunSpawn(t *testing.T, wine string, env []string, bun, input, command string, args ...string) bunResult {
	t.Helper()
	argv := append([]string{bun, testenv.WindowsPath(filepath.Join(testenv.ModuleRoot(t), "plugin", "testdata", "bunspawn.js")), command}, args...)
	cmd := exec.Command(wine, argv...)
	cmd.Env = env
	if input != "" {
		cmd.Env = append(cmd.Env, "HOOK_INPUT="+testenv.WindowsPath(input))
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("wine bun: %v\n%s", err, out)
	}
	var r bunResult
	line := strings.TrimSpace(string(out))
	if i := strings.LastIndex(line, "\n"); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("bunspawn.js output %q: %v", out, err)
	}
	return r
}

// TestBunSpawnsWindowsLauncher is the Windows hooks design under Wine with
// the runtime Claude Code is built on: hooks.json's exec-form command,
// ${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal substituted with a Windows root
// (a space and a non-ASCII letter in it), spawned as Claude Code spawns
// it, starts plugin/mcp-heal.exe, the Windows launcher, never the sh
// script beside it; the launcher answers PreToolUse on its fast path, runs
// the bundled binary only when its SHA-256 matches SHA256SUMS, and exits 0
// with one line when it does not. Without the .exe the spawn fails
// (ENOENT): the #! script is no fallback, so this is not Wine running a
// script real Windows would refuse. What it cannot show is Claude Code's
// own hook runner around that spawn (docs/install.md says so).
func TestBunSpawnsWindowsLauncher(t *testing.T) {
	testenv.NeedsFull(t, "Wine, MinGW and Bun for Windows")
	w := testenv.WinePrefix(t)
	wine, wenv := w.Bin, w.Env()
	bun := bunExe(t)
	src := testenv.ModuleRoot(t)

	root := filepath.Join(t.TempDir(), "plugin root Ü")
	build := func(pkg, out string) {
		t.Helper()
		env := append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir, cmd.Env = src, env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	launcher := filepath.Join(root, "plugin", "mcp-heal.exe")
	build("./plugin/winlauncher", launcher)
	probe := filepath.Join(root, "bin", "mcp-heal-windows-amd64.exe")
	build("./plugin/testdata/winprobe", probe)
	copySource(t, root, "plugin/mcp-heal", ".claude-plugin/plugin.json")
	b, _ := os.ReadFile(probe)
	sums := filepath.Join(root, "bin", "SHA256SUMS")
	os.WriteFile(sums, []byte(hexSum(b)+"  mcp-heal-windows-amd64.exe\n"), 0o644)

	home := t.TempDir()
	data := 0
	// hook spawns root's plugin/mcp-heal as Claude Code spawns an
	// exec-form hook, with a fresh plugin data directory when fresh.
	hook := func(fresh bool, args ...string) bunResult {
		t.Helper()
		if fresh {
			data++
		}
		env := append(append([]string{}, wenv...),
			"CLAUDE_PLUGIN_ROOT="+testenv.WindowsPath(root),
			"CLAUDE_PLUGIN_DATA="+testenv.WindowsPath(filepath.Join(home, fmt.Sprint("data", data))),
			"XDG_STATE_HOME="+testenv.WindowsPath(filepath.Join(home, "state")),
			"XDG_DATA_HOME="+testenv.WindowsPath(filepath.Join(home, fmt.Sprint("xdg", data))))
		return bunSpawn(t, wine, env, bun, "", testenv.WindowsPath(root)+"/plugin/mcp-heal", args...)
	}
	ok := bunResult.ok

	if r := hook(true, "hook", "SessionStart"); !ok(r) || r.Stdout != `winprobe ["hook" "SessionStart"]`+"\r\n" && r.Stdout != `winprobe ["hook" "SessionStart"]`+"\n" {
		t.Fatalf("SessionStart: %+v, want the verified bundled binary's line", r)
	}
	if r := hook(false, "hook", "PreToolUse"); !ok(r) || r.Stdout != "" {
		t.Fatalf("PreToolUse with nothing in the attention directory: %+v, want no output (fast path)", r)
	}
	os.WriteFile(sums, []byte(strings.Repeat("0", 64)+"  mcp-heal-windows-amd64.exe\n"), 0o644)
	if r := hook(true, "hook", "SessionStart"); !ok(r) || !strings.Contains(r.Stdout, `"systemMessage":"mcp-heal: reinstall the plugin (claude plugin install mcp-heal@mcp-heal): the bundled binary bin/mcp-heal-windows-amd64.exe does not match`) || strings.Contains(r.Stdout, "winprobe") {
		t.Fatalf("tampered: %+v, want one systemMessage and the binary not run", r)
	}
	os.Remove(launcher)
	if r := hook(true, "hook", "SessionStart"); r.Error == "" || strings.Contains(r.Stdout, "winprobe") {
		t.Fatalf("without plugin/mcp-heal.exe: %+v, want a spawn error (the sh script is never run on Windows)", r)
	}
}

// TestReleasedPluginHooksUnderWine: the release for windows/amd64
// (go run ./internal/release), its hooks spawned under Wine as Claude Code
// spawns them, answers recorded Claude Code payloads as on Linux: the
// Windows launcher checks and caches the real binary, installs the stable
// copy (mcp-heal.exe with its .version), and the binary replies.
func TestReleasedPluginHooksUnderWine(t *testing.T) {
	testenv.NeedsFull(t, "Wine, MinGW, Bun for Windows and a release build")
	w := testenv.WinePrefix(t)
	wine, wenv := w.Bin, w.Env()
	bun := bunExe(t)
	rel := filepath.Join(t.TempDir(), "release Ü")
	cmd := exec.Command("go", "run", "./internal/release", "-o", rel, "-targets", "windows/amd64")
	cmd.Dir = testenv.ModuleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release: %v\n%s", err, out)
	}
	home := t.TempDir()
	env := append(append([]string{}, wenv...),
		"HOME="+testenv.WindowsPath(home), "USERPROFILE="+testenv.WindowsPath(home), "CLAUDE_PROJECT_DIR="+testenv.WindowsPath(home),
		"CLAUDE_PLUGIN_ROOT="+testenv.WindowsPath(rel), "CLAUDE_PLUGIN_DATA="+testenv.WindowsPath(filepath.Join(home, "plugin-data")),
		"XDG_STATE_HOME="+testenv.WindowsPath(filepath.Join(home, "state")), "XDG_DATA_HOME="+testenv.WindowsPath(filepath.Join(home, "data")))
	launcher := testenv.WindowsPath(rel) + "/plugin/mcp-heal"
	if r := bunSpawn(t, wine, env, bun, "", launcher, "version"); !r.ok() || !strings.HasPrefix(r.Stdout, "mcp-heal ") {
		t.Fatalf("version: %+v", r)
	}
	payload := filepath.Join(testenv.HookPayloadDir(t), "PostToolUseFailure.stdio-not-connected.json")
	r := bunSpawn(t, wine, env, bun, payload, launcher, "hook", "PostToolUseFailure")
	var reply struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if !r.ok() || json.Unmarshal([]byte(r.Stdout), &reply) != nil || !strings.Contains(reply.HookSpecificOutput.AdditionalContext, "/mcp reconnect tiny") {
		t.Fatalf("PostToolUseFailure: %+v, want additionalContext naming /mcp reconnect tiny", r)
	}
	for _, f := range []string{"plugin-data/bin/mcp-heal-" + pluginVersion(t) + ".exe", "data/mcp-heal/bin/mcp-heal.exe", "data/mcp-heal/bin/mcp-heal.exe.version"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Errorf("after the hooks: %v", err)
		}
	}
}
