package health

import (
	"testing"
	"time"

	"github.com/adrg/xdg"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// TestAnsweredByLaterCall: status judges a server by its latest incident,
// unless a call to it went out after the incident (the PreToolUse hook's
// mark) and none failed since: then it works again.
func TestAnsweredByLaterCall(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	xdg.Reload()
	t.Cleanup(xdg.Reload)
	now := time.Now()
	in := &state.Incident{Server: "ex", Class: string(ConnClosed), Time: now.Add(-time.Minute)}
	if got := answered(in); got != in {
		t.Fatalf("no call since: got %+v, want the incident", got)
	}
	if err := state.MarkCalled("ex", true); err != nil {
		t.Fatal(err)
	}
	got := answered(in)
	if got.Class != string(OK) || !got.Time.After(in.Time) {
		t.Fatalf("a call since: got %+v, want ok", got)
	}
	if v := Judge(Server{}.Server, nil, got, now, Shell); v.Health != Healthy {
		t.Fatalf("verdict %+v, want %s", v, Healthy)
	}
	// A failure after the call is newer than its mark: failing again.
	later := &state.Incident{Server: "ex", Class: string(ConnClosed), Time: time.Now().Add(time.Second)}
	if got := answered(later); got != later {
		t.Fatalf("a failure after the call: got %+v, want that failure", got)
	}
}
