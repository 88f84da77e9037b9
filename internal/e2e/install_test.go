//go:build unix

package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var (
	releaseOnce sync.Once
	releaseDir  string
	releaseErr  string
)

// releaseMarketplace runs the release step as a maintainer does, `go run
// ./internal/release -o DIR`, once per test binary.
func releaseMarketplace(t *testing.T) string {
	t.Helper()
	releaseOnce.Do(func() {
		d, err := os.MkdirTemp("", "mcp-heal-e2e-release-")
		if err != nil {
			releaseErr = err.Error()
			return
		}
		releaseDir = filepath.Join(d, "marketplace")
		cmd := exec.Command("go", "run", "./internal/release", "-o", releaseDir)
		cmd.Dir = testenv.ModuleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			releaseErr = err.Error() + "\n" + string(out)
		}
	})
	if releaseErr != "" {
		t.Fatalf("go run ./internal/release: %s", releaseErr)
	}
	return releaseDir
}

// noGoPath is a PATH with the system's tools and Claude Code but no `go`.
func noGoPath(t *testing.T, s *session) string {
	t.Helper()
	path := filepath.Dir(s.claude) + ":/usr/bin:/bin"
	for _, dir := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			t.Fatalf("this test needs a PATH without go, but %s/go exists", dir)
		}
	}
	return path
}

// installRelease installs the plugin from the marketplace dir with the
// real claude CLI into s's HOME, with no Go on PATH, and returns the
// installed plugin's root and data directory.
func installRelease(t *testing.T, s *session, dir string) (root, data string) {
	t.Helper()
	s.env = append(s.env, "PATH="+noGoPath(t, s))
	for _, args := range [][]string{
		{"plugin", "marketplace", "add", dir},
		{"plugin", "install", "mcp-heal@mcp-heal"},
		{"plugin", "list", "--json"},
	} {
		out := []byte(s.claudeCLI(t, args...))
		if args[1] != "list" {
			continue
		}
		var list []struct {
			ID          string `json:"id"`
			Enabled     bool   `json:"enabled"`
			InstallPath string `json:"installPath"`
		}
		i := strings.Index(string(out), "[")
		if i < 0 || json.Unmarshal(out[i:], &list) != nil {
			t.Fatalf("plugin list: got %s, want a JSON list", out)
		}
		// 2.1.332 lists its built-in plugins (cc-plugin-...@builtin) too.
		for _, p := range list {
			if p.ID == "mcp-heal@mcp-heal" && p.Enabled {
				root = p.InstallPath
			}
		}
		if root == "" {
			t.Fatalf("plugin list: got %s, want mcp-heal@mcp-heal enabled", out)
		}
	}
	return root, filepath.Join(s.home, ".claude", "plugins", "data", "mcp-heal-mcp-heal")
}

// hook runs the installed launcher as Claude Code runs a hook.
func installedHook(t *testing.T, s *session, root, data, event, payloadFile string) string {
	t.Helper()
	payload, err := os.ReadFile(filepath.Join(testenv.HookPayloadDir(t), payloadFile))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "plugin", "mcp-heal"), "hook", event)
	cmd.Env = append(s.environ(), "CLAUDE_PLUGIN_ROOT="+root, "CLAUDE_PLUGIN_DATA="+data, "CLAUDE_PROJECT_DIR="+s.work)
	cmd.Dir = s.work
	cmd.Stdin = strings.NewReader(string(payload))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("installed hook %s: %v (want exit 0)\nstdout: %s\nstderr: %s", event, err, out, stderr.String())
	}
	return string(out)
}

// TestInstallReleaseWithoutGo is issue 8's promise: the release step's
// marketplace, installed with the real claude CLI in a HOME whose PATH has
// no Go, gives working hooks (a recorded PostToolUseFailure payload gets
// its additionalContext) and a working `/mcp-heal status` in a real
// session on the very first event; the same marketplace with one byte of
// the bundled binary flipped fails open with the integrity message.
func TestInstallReleaseWithoutGo(t *testing.T) {
	testenv.NeedsFull(t, "the release step and Claude Code")
	dir := releaseMarketplace(t)
	t.Run("verified", func(t *testing.T) {
		s := newSession(t, Turn{Text: "Here is the mcp-heal status."})
		root, data := installRelease(t, s, dir)
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			t.Fatal("the installed release holds go.mod: it would build from source")
		}
		out := installedHook(t, s, root, data, "PostToolUseFailure", "PostToolUseFailure.stdio-not-connected.json")
		var reply struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(out), &reply); err != nil || !strings.Contains(reply.HookSpecificOutput.AdditionalContext, "/mcp reconnect tiny") {
			t.Fatalf("first hook of the installed release: got %q (%v), want additionalContext naming /mcp reconnect tiny", out, err)
		}
		// /mcp-heal status in a real session of the installed plugin (no
		// --plugin-dir): its `!` line runs the installed launcher, whose
		// report reaches the model.
		start := time.Now()
		r := s.runP([]string{"/mcp-heal status"}, 3*time.Minute)
		if r.Err != nil {
			t.Fatalf("claude -p /mcp-heal status: %v\n%s", r.Err, r.Stderr)
		}
		report := s.model.ForTurn(0).UserText()
		if !strings.Contains(report, "No MCP servers configured") || strings.Contains(report, "exited with status") {
			t.Fatalf("/mcp-heal status through the installed release (%v): the model saw:\n%s", time.Since(start), report)
		}
		name := "mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH
		cached, _ := os.ReadFile(filepath.Join(data, "bin", "mcp-heal-0.1.0"))
		bundled, _ := os.ReadFile(filepath.Join(root, "bin", name))
		if len(cached) == 0 || string(cached) != string(bundled) {
			t.Fatalf("the verified copy in %s is not the bundled %s", data, name)
		}

		// Uninstalling the plugin leaves the stable copy, which wrapped
		// server entries run, in place: they keep working (docs/install.md
		// says to run /mcp-heal unwrap --all first to undo the wrapping).
		s.claudeCLI(t, "plugin", "uninstall", "mcp-heal@mcp-heal")
		stable := filepath.Join(s.home, ".local", "share", "mcp-heal", "bin", "mcp-heal")
		if out, err := exec.Command(stable, "version").Output(); err != nil || !strings.HasPrefix(string(out), "mcp-heal 0.1.0") {
			t.Fatalf("after uninstall the stable copy %s: %q %v, want it still there", stable, out, err)
		}
	})
	t.Run("tampered", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "marketplace")
		if out, err := exec.Command("cp", "-a", dir, bad).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		name := "mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH
		bin := filepath.Join(bad, "bin", name)
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/3] ^= 0x80
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		s := newSession(t)
		root, data := installRelease(t, s, bad)
		out := installedHook(t, s, root, data, "PostToolUseFailure", "PostToolUseFailure.stdio-not-connected.json")
		want := `{"systemMessage":"mcp-heal: reinstall the plugin (claude plugin install mcp-heal@mcp-heal): the bundled binary bin/` + name + ` does not match the plugin's SHA256SUMS, so it was not run`
		if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, want) {
			t.Fatalf("hook with a tampered binary: got %q, want one line starting %q", out, want)
		}
	})
}

// gitServer serves the bare repositories under root over HTTP (git's own
// smart-HTTP backend as a CGI) on a loopback port, and returns its URL.
func gitServer(t *testing.T, root string) string {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=release", "GIT_AUTHOR_EMAIL=release@example.com", "GIT_COMMITTER_NAME=release", "GIT_COMMITTER_EMAIL=release@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestInstallFromDistBranch is the publishing design of docs/install.md:
// the release directory committed as the whole tree of a `dist` branch of
// the repository, whose default branch is the source. `claude plugin
// marketplace add <git url>#dist` in a HOME without Go installs the
// released plugin (binaries, no go.mod), and its first hook answers.
func TestInstallFromDistBranch(t *testing.T) {
	testenv.NeedsFull(t, "the release step and Claude Code")
	dir := releaseMarketplace(t)
	repos := t.TempDir()
	work := filepath.Join(repos, "work")
	os.MkdirAll(work, 0o755)
	git(t, work, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(work, "go.mod"), []byte("module example.com/source\n"), 0o644)
	git(t, work, "add", "-A")
	git(t, work, "commit", "-qm", "source")
	git(t, work, "checkout", "-q", "--orphan", "dist")
	git(t, work, "rm", "-rfq", ".")
	if out, err := exec.Command("cp", "-a", dir+"/.", work).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	git(t, work, "add", "-A")
	git(t, work, "commit", "-qm", "release")
	git(t, work, "checkout", "-q", "main")
	git(t, repos, "clone", "-q", "--bare", "work", "mcp-heal.git")
	url := gitServer(t, repos) + "/mcp-heal.git#dist"

	s := newSession(t)
	root, data := installRelease(t, s, url)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
		t.Fatalf("installed %s holds the default branch's go.mod, want the dist branch", url)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "SHA256SUMS")); err != nil {
		t.Fatalf("installed plugin from %s has no bin/SHA256SUMS: %v", url, err)
	}
	out := installedHook(t, s, root, data, "PostToolUseFailure", "PostToolUseFailure.stdio-not-connected.json")
	if !strings.Contains(out, "/mcp reconnect tiny") {
		t.Fatalf("first hook of the plugin installed from the dist branch: got %q", out)
	}
}

// shellLine runs one line of the README in the user's shell: HOME, the
// PATH the README's export line gives (~/.local/bin first, no Go).
func (s *session) shellLine(t *testing.T, line string) string {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Dir = s.work
	cmd.Env = []string{"HOME=" + s.home, "PATH=" + filepath.Join(s.home, ".local", "bin") + ":/usr/bin:/bin",
		"XDG_DATA_HOME=" + filepath.Join(s.home, ".local", "share"), "XDG_STATE_HOME=" + s.stateDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("$ %s: %v\n%s", line, err, out)
	}
	return string(out)
}

// claudeCLI runs `claude <args>` (the shell form of a /plugin line).
func (s *session) claudeCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.claude, args...)
	cmd.Dir = s.work
	cmd.Env = s.environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
