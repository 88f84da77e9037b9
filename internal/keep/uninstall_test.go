//go:build unix

package keep_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// runIn runs the mcp-heal binary in e's state and runtime dirs, with home as
// HOME and the working directory (the project).
func (e *env) runIn(t *testing.T, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+e.state, "XDG_RUNTIME_DIR="+e.runtime,
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "CLAUDE_PROJECT_DIR="+home, "CLAUDE_CODE_SESSION_ID=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcp-heal %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestUnwrapStopsKeptServers is issue 18 item 5: `unwrap --all` (the first
// step of the documented uninstall) stops the kept servers of the servers
// it gives back; before, a kept server ran on after unwrap, after `/plugin
// uninstall` and the documented rm -rf, its guardian running a deleted
// binary. `stop --all` stops any other.
func TestUnwrapStopsKeptServers(t *testing.T) {
	e := newEnv(t)
	home := t.TempDir()
	cfg := fmt.Sprintf(`{"mcpServers":{"kept":{"command":%q,"args":["example-server"]}}}`, e.bin)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.runIn(t, home, "wrap", "--all", "--keep", "1m", "--shim", e.bin)
	// What Claude Code starts from the wrapped entry, then lets go of.
	a := e.shim(t, "1m")
	a.handshake()
	server := int(a.info().Get("pid").Int())
	guardian := testenv.ParentPID(server)
	a.kill()
	e.keptRecord(t)
	if !testenv.Alive(server) {
		t.Fatal("the kept server did not outlive its shim")
	}

	out := e.runIn(t, home, "unwrap", "--all")
	if !strings.Contains(out, fmt.Sprintf("kept: stopped its kept server (pid %d)", server)) {
		t.Errorf("unwrap --all output lacks the kept server it stopped:\n%s", out)
	}
	testenv.WaitGone(t, "the kept server after unwrap --all", 10*time.Second, server, guardian)

	// stop --all: every kept server, whatever its name.
	b := e.shim(t, "1m")
	b.handshake()
	server = int(b.info().Get("pid").Int())
	guardian = testenv.ParentPID(server)
	b.kill()
	e.keptRecord(t)
	if out := e.runIn(t, home, "stop", "--all"); !strings.Contains(out, fmt.Sprintf("stopped a kept server (pid %d)", server)) {
		t.Errorf("stop --all: %q", out)
	}
	testenv.WaitGone(t, "the kept server after stop --all", 10*time.Second, server, guardian)
	if out := e.runIn(t, home, "stop", "--all"); !strings.Contains(out, "no kept server is running") {
		t.Errorf("stop --all with none left: %q", out)
	}
}
