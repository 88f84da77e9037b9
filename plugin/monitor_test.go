//go:build unix

package plugin_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestMonitorEndsWithPlugin (issue 32, item 5): after /plugin uninstall
// the monitor kept running from the plugin cache until /exit. Claude Code
// leaves the uninstalled version's cache directory in place, marked
// .orphaned_at (2.1.328 and 2.1.332), and starts the monitor through the
// launcher with no CLAUDE_PLUGIN_ROOT in its environment. Here the
// launcher of a copy of the plugin runs `monitor` as Claude Code does; it
// stays while the plugin is there, and ends, printing nothing, once the
// directory is marked.
func TestMonitorEndsWithPlugin(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(home, ".claude", "plugins", "cache", "mcp-heal", "mcp-heal", "0.0.0")
	src := testenv.ModuleRoot(t)
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"plugin", ".claude-plugin", "monitors"} {
		if out, err := exec.Command("cp", "-R", filepath.Join(src, d), filepath.Join(root, d)).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", d, err, out)
		}
	}
	claude := exec.Command("sleep", "120")
	if err := claude.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { claude.Process.Kill(); claude.Wait() }()
	cmd := exec.Command("/bin/sh", "-c", `"$0/plugin/mcp-heal" monitor`, root)
	cmd.Env = append(claudeEnv(home), "MCP_HEAL_BIN="+testenv.Binary(t), "CLAUDE_CODE_SESSION_ID=s1", "CLAUDE_PID="+strconv.Itoa(claude.Process.Pid), "CLAUDE_CODE_ENTRYPOINT=cli")
	cmd.Dir = home
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := testenv.StartWait(t, cmd)
	select {
	case err := <-done:
		t.Fatalf("the monitor ended with its plugin installed: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	case <-time.After(3 * time.Second):
	}
	if err := os.WriteFile(filepath.Join(root, ".orphaned_at"), []byte("1765100000000"), 0o600); err != nil {
		t.Fatal(err)
	}
	marked := time.Now()
	select {
	case err := <-done:
		if err != nil || out.Len() != 0 {
			t.Fatalf("the monitor ended with %v, printing %q (stderr %q); want exit 0 and nothing", err, out.String(), errb.String())
		}
		t.Logf("the monitor ended %s after its plugin was marked orphaned", time.Since(marked).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the monitor still runs 10 s after its plugin was uninstalled (marked .orphaned_at)")
	}
}
