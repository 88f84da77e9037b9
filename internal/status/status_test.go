package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// newHome points the state directory at a fresh one, and returns a fresh
// HOME whose ~/.claude.json holds config.
func newHome(t *testing.T, config string) string {
	t.Helper()
	testenv.UseStateDir(t, testenv.TempDir(t))
	home := testenv.TempDir(t)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// TestUnapprovedStatus: a cloned repository's pending "github" beside the
// user's own is shown as pending, not as the user's server: the user's
// shims and incidents are the user's entry's.
func TestUnapprovedStatus(t *testing.T) {
	repo := filepath.Join(testenv.TempDir(t), "clone")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o700)
	repo, _ = filepath.EvalSymlinks(repo)
	home := newHome(t, `{"mcpServers":{"github":{"command":"users-own"}},"projects":{"`+cfgtest.JSON(repo)+`":{"hasTrustDialogAccepted":true}}}`)
	os.WriteFile(filepath.Join(repo, ".mcp.json"), []byte(`{"mcpServers":{"github":{"command":"the-repositorys"}}}`), 0o600)
	now := time.Now()
	if err := state.AppendIncident(state.Incident{Session: "s", Server: "github", Class: string(health.NotConnected), Time: now.Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	rep := Status(claudecfg.Options{Home: home, ProjectDir: repo}, "", 0, now, nil, health.Shell)
	got := map[string]string{}
	for _, s := range rep.Servers {
		got[s.Command] = s.Health
	}
	if got["the-repositorys"] != health.Pending || got["users-own"] != health.Failing {
		t.Fatalf("health by command: %v, want the repository's %s and the user's %s", got, health.Pending, health.Failing)
	}
}

// TestNotesOneALine: each note of the report is a line of its own (once
// they were joined and quoted as one, so the whole list printed on one
// line with a literal \n between notes), and a server's own line break
// inside a note is still shown quoted, never printed.
func TestNotesOneALine(t *testing.T) {
	rep := Report{Project: "/p", Servers: []Server{
		{Server: claudecfg.Server{Name: "a", Command: "a"}, Health: health.Failing, HealthDetail: "first note"},
		{Server: claudecfg.Server{Name: "b", Command: "b"}, Health: health.Failing, HealthDetail: "second\nnote\x1b[2J"},
	}}
	var b strings.Builder
	rep.WriteText(&b, "/home/u", time.Now(), health.Shell)
	out := b.String()
	if !strings.Contains(out, "\n  a: first note\n  b: second\\nnote\\x1b[2J\n") {
		t.Fatalf("notes not one a line, or a server's text not quoted:\n%s", out)
	}
}

// TestNoOldErrorBesideOK: a server that works again shows no "last
// error" note: the error is history (its LAST EXIT column keeps how the
// last run ended); a server still restarting shows it (issue 32).
func TestNoOldErrorBesideOK(t *testing.T) {
	rec := &state.Record{Server: "notes", State: state.Running, ChildPID: 10, Restarts: 2, LastError: "command not found: notes-server"}
	rep := Report{Project: "/p", Servers: []Server{
		{Server: claudecfg.Server{Name: "notes", Command: "notes-server"}, Health: health.Healthy, Shims: []*state.Record{rec}},
	}}
	var b strings.Builder
	rep.WriteText(&b, "/home/u", time.Now(), health.Shell)
	if out := b.String(); strings.Contains(out, "last error") {
		t.Fatalf("an ok server with an old error:\n%s", out)
	}
	back := *rec
	back.State = state.Backoff
	rep.Servers[0].Health, rep.Servers[0].Shims = state.Backoff, []*state.Record{&back}
	b.Reset()
	rep.WriteText(&b, "/home/u", time.Now(), health.Shell)
	if out := b.String(); !strings.Contains(out, "notes: last error: command not found: notes-server") {
		t.Fatalf("a server in backoff without its last error:\n%s", out)
	}
}
