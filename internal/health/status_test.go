package health

import (
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// TestAnsweredByLaterCall: status judges a server by its latest incident,
// unless a call to it went out after the incident (the PreToolUse hook's
// mark) and none failed since: then it works again.
func TestAnsweredByLaterCall(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	now := time.Now()
	in := &state.Incident{Session: "s1", Server: "ex", Class: string(ConnClosed), Time: now.Add(-time.Minute)}
	if got, _ := answered(in); got != in {
		t.Fatalf("no call since: got %+v, want the incident", got)
	}
	// Another session's call says nothing about this one's.
	if err := state.MarkCalled("s2", "ex", now); err != nil {
		t.Fatal(err)
	}
	if got, _ := answered(in); got != in {
		t.Fatalf("a call in another session: got %+v, want the incident", got)
	}
	if err := state.MarkCalled("s1", "ex", now); err != nil {
		t.Fatal(err)
	}
	got, why := answered(in)
	if got.Class != string(OK) || !got.Time.After(in.Time) || !strings.Contains(why, "no failure since") {
		t.Fatalf("a call since: got %+v (%q), want ok saying why", got, why)
	}
	if v := Judge(Server{}.Server, nil, got, now, Shell); v.Health != Healthy {
		t.Fatalf("verdict %+v, want %s", v, Healthy)
	}
	// A failure after the call is newer than its mark: failing again.
	later := &state.Incident{Session: "s1", Server: "ex", Class: string(ConnClosed), Time: now.Add(time.Second)}
	if got, _ := answered(later); got != later {
		t.Fatalf("a failure after the call: got %+v, want that failure", got)
	}
}
