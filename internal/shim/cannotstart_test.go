//go:build unix

package shim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestCommandCannotStart: a command that is not there, then not
// executable, is reported as such (with its path) at the first failed
// start, not as a crash loop after five, and is not respawned at full
// backoff: the shim waits for the file to change, then starts it.
func TestCommandCannotStart(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	life, err := state.OpenLog("fake")
	if err != nil {
		t.Fatal(err)
	}
	defer life.Close()
	server := filepath.Join(t.TempDir(), "server")
	h := newHarness(t, hopt{
		command: []string{server},
		opts:    func(o *Options) { o.Record, o.Lifecycle = true, life },
	})
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(state.LogPath("fake"))
			t.Logf("lifecycle log:\n%s", b)
		}
	})
	starts := func() int {
		b, _ := os.ReadFile(state.LogPath("fake"))
		return strings.Count(string(b), `"event":"start-failed"`)
	}

	r := h.call("initialize", initParams)
	msg := r.Get("error.message").String()
	if r.Get("error.data.reason").String() != "server-cannot-start" || !strings.Contains(msg, "cannot start: its command cannot be run (command not found: "+server+")") || !strings.Contains(msg, "then run /mcp-heal heal fake") {
		t.Fatalf("got %s", r.Raw)
	}
	if m, ok := health.Classify("MCP error -32603: " + msg); !ok || m.Class != health.CannotStart || m.Server != "fake" {
		t.Errorf("the hooks classify it as %+v", m)
	}
	waitOwnRecord(t, "a cannot-start record", func(rec *state.Record) bool {
		return rec.State == state.Failed && rec.Failure == string(health.CannotStart) && strings.Contains(rec.LastError, server)
	})
	// The backoff (20 ms doubling to 200 ms) would have made about ten
	// more attempts by now; a command that is not there is not tried again.
	time.Sleep(2 * time.Second)
	if n := starts(); n != 1 {
		t.Errorf("%d start attempts in 2 s, want 1", n)
	}

	// There now, but not executable: tried once more, and said so.
	script := "#!/bin/sh\nexec " + os.Args[0] + " \"$@\"\n"
	if err := os.WriteFile(server, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the not-executable error", func() bool {
		return strings.Contains(h.call("initialize", initParams).Get("error.message").String(), server+" is not executable")
	})
	// Fixed: the shim starts it by itself and calls go through.
	if err := os.Chmod(server, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "the server to start", func() bool {
		return h.call("initialize", initParams).Get("result.protocolVersion").Exists()
	})
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := h.tool("echo", `{"text":"up"}`).Get("result.content.0.text").String(); got != "up" {
		t.Errorf("echo after the fix: %q", got)
	}
	if n := starts(); n > 3 {
		t.Errorf("%d failed starts in all, want at most 3 (one per change of the file)", n)
	}
}
