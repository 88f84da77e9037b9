//go:build unix

package e2e

import (
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

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
