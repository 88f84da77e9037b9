//go:build unix

package status

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// TestShimExitedStatus (issue 32, item 4): a shim killed with SIGKILL
// leaves its record behind; status found no live shim and said "no shim
// running: not started since it was wrapped", though it had started and
// died. Now it names the death and what to run.
func TestShimExitedStatus(t *testing.T) {
	home, proj := newHome(t, `{"mcpServers":{"notes":{"command":"/opt/mh/mcp-heal","args":["shim","--name","notes","--","notes-server"]}}}`), testenv.TempDir(t)
	claude := testenv.StartProcess(t, "sleep", "60") // the session's Claude Code: still running
	shim := testenv.StartProcess(t, "sleep", "60")
	fakeshim.WriteRecord(t, state.Record{Server: "notes", Session: "s1", ClaudePID: claude.Process.Pid, ShimPID: shim.Process.Pid, Mode: state.ModeStdio, State: state.Running, ChildPID: 1, Started: time.Now()})
	o := claudecfg.Options{Home: home, ProjectDir: proj}
	if rep := Status(o, "", 0, time.Now(), nil, health.Shell); rep.Servers[0].Health != health.Healthy {
		t.Fatalf("while the shim runs: %+v", rep.Servers[0])
	}
	shim.Kill()
	killed := time.Now()
	rep := Status(o, "", 0, time.Now(), nil, health.Shell)
	s := rep.Servers[0]
	want := "run /mcp reconnect notes in Claude Code: its shim exited at " + killed.Local().Format("15:04:05") + " (killed or crashed)"
	if s.Health != health.ShimExited || s.HealthDetail != want && !strings.HasPrefix(s.HealthDetail, "run /mcp reconnect notes in Claude Code: its shim exited ") {
		t.Fatalf("after the shim was killed: %s: %q, want %s: %q", s.Health, s.HealthDetail, health.ShimExited, want)
	}
	// Again (the record is gone now, its Gone stays), and in the
	// session's own view.
	if s := Status(o, "s1", 0, time.Now(), nil, health.Claude).Servers[0]; s.Health != health.ShimExited || !strings.HasPrefix(s.HealthDetail, "run /mcp reconnect notes: its shim exited ") {
		t.Fatalf("read again, inside the session: %s: %q", s.Health, s.HealthDetail)
	}
	// The session ended: history, not the server's health.
	claude.Kill()
	if s := Status(o, "", 0, time.Now(), nil, health.Shell).Servers[0]; s.Health == health.ShimExited {
		t.Fatalf("after the session ended: %s: %q", s.Health, s.HealthDetail)
	}
}

// TestStatusAfterClear: /clear gives the session a new id and keeps its
// servers, whose shims recorded the old one; inside the session status
// finds them by the Claude Code they run under ($CLAUDE_PID, the shim's
// parent). Before, `/mcp-heal status` after /clear said the wrapped
// server had no shim running.
func TestStatusAfterClear(t *testing.T) {
	home, proj := newHome(t, `{"mcpServers":{"notes":{"command":"/opt/mh/mcp-heal","args":["shim","--name","notes","--","notes-server"]}}}`), testenv.TempDir(t)
	claude := testenv.StartProcess(t, "sleep", "60")
	shim := testenv.StartProcess(t, "sleep", "60")
	fakeshim.WriteRecord(t, state.Record{Server: "notes", Session: "before-clear", ClaudePID: claude.Process.Pid, ShimPID: shim.Process.Pid, Mode: state.ModeStdio, State: state.Running, ChildPID: 1, Started: time.Now()})
	o := claudecfg.Options{Home: home, ProjectDir: proj}
	if s := Status(o, "after-clear", claude.Process.Pid, time.Now(), nil, health.Claude).Servers[0]; s.Health != health.Healthy {
		t.Fatalf("after /clear, under the same Claude Code: %s: %q, want the running shim", s.Health, s.HealthDetail)
	}
	if s := Status(o, "another-session", 0, time.Now(), nil, health.Claude).Servers[0]; s.Health == health.Healthy {
		t.Fatalf("another session, no Claude Code pid: %s: %q, want no shim of its own", s.Health, s.HealthDetail)
	}
}
