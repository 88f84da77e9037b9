//go:build unix

package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// TestBusyServerNotKilledByDefaultHangDetection runs a 20 s tool call of
// server-everything (the TypeScript SDK) through the shim with the entry
// `wrap` writes: no progress token, so the server is silent for longer
// than the default hang detection (3 s, then a 10 s ping) takes. The SDK
// answers the shim's pings while the call runs, so the server is busy, not
// hung: the call succeeds on the same server, never restarted.
func TestBusyServerNotKilledByDefaultHangDetection(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	xdg := t.TempDir()
	c := startTSClient(t, shimmed(t, "everything", tsEverything(t)), map[string]string{"XDG_STATE_HOME": xdg})
	shim := c.connect()
	child := shimChild(t, xdg, shim, 0)
	start := time.Now()
	r := c.wait(c.start(map[string]any{"op": "call", "name": "trigger-long-running-operation",
		"args": map[string]any{"duration": 20, "steps": 2}, "timeoutMs": 60000}), 90*time.Second)
	wantOK(t, "a 20 s call", r)
	t.Logf("the 20 s call took %v through the shim", time.Since(start).Round(time.Millisecond))
	b, err := os.ReadFile(filepath.Join(xdg, "mcp-heal", "shims", strconv.Itoa(shim)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec state.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Restarts != 0 || rec.ChildPID != child {
		t.Errorf("the busy server was restarted: %d restarts, child %d (was %d), last exit %+v", rec.Restarts, rec.ChildPID, child, rec.LastExit)
	}
}
