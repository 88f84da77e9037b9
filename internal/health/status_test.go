package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
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

// TestUnapprovedStatus: a cloned repository's pending "github" beside the
// user's own is shown as pending, not as the user's server: the user's
// shims and incidents are the user's entry's.
func TestUnapprovedStatus(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	base := t.TempDir()
	home, repo := filepath.Join(base, "home"), filepath.Join(base, "clone")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o700)
	os.MkdirAll(home, 0o700)
	repo, _ = filepath.EvalSymlinks(repo)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"mcpServers":{"github":{"command":"users-own"}},"projects":{"`+repo+`":{"hasTrustDialogAccepted":true}}}`), 0o600)
	os.WriteFile(filepath.Join(repo, ".mcp.json"), []byte(`{"mcpServers":{"github":{"command":"the-repositorys"}}}`), 0o600)
	now := time.Now()
	if err := state.AppendIncident(state.Incident{Session: "s", Server: "github", Class: string(NotConnected), Time: now.Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	rep := Status(claudecfg.Options{Home: home, ProjectDir: repo}, "", now, nil, Shell)
	got := map[string]string{}
	for _, s := range rep.Servers {
		got[s.Command] = s.Health
	}
	if got["the-repositorys"] != Pending || got["users-own"] != Failing {
		t.Fatalf("health by command: %v, want the repository's %s and the user's %s", got, Pending, Failing)
	}
}
