//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestStatusLine: `mcp-heal statusline` as Claude Code's statusLine, in
// a real interactive session (tmux), set up the way a user does it
// (`mcp-heal statusline --install` into ~/.claude/settings.json). Two
// wrapped servers; the line on the screen is read (capture-pane) while
// both are healthy, after "ex"'s server is killed (its shim restarts
// it), and after "loop" falls into a crash loop. Claude Code runs the line
// on its own: nothing is typed. With the plugin its monitor's lines wake
// the model, and Claude Code redraws; without it nothing happens in the
// session at all (the model is never asked), and the line still changes:
// refreshInterval alone runs it.
func TestStatusLine(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code and tmux")
	t.Parallel()
	t.Run("with the plugin", func(t *testing.T) { statusLine(t, true) })
	t.Run("without the plugin", func(t *testing.T) { statusLine(t, false) })
}

func statusLine(t *testing.T, plugin bool) {
	s := newSession(t)
	if plugin {
		s.withPlugin()
	}
	loop := dataFile(s, "starts")
	if err := os.WriteFile(loop, []byte("1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.addExample("ex", true, nil)
	s.addExample("loop", true, []string{"--max-failures", "2", "--backoff-max", "500ms"}, "--fail-starts", "1000", "--fail-file", loop)

	s.installStatusLine(t)
	b, _ := os.ReadFile(filepath.Join(s.home, ".claude", "settings.json"))
	t.Logf("settings.json after --install:\n%s", b)

	// The status line takes the place of the "? for shortcuts" hint:
	// the prompt's mark says the session is ready.
	ts := s.startInteractive("❯", time.Minute)
	healthy := ts.statusLine("healthy", `MCP 2/2 ok`)
	t.Logf("healthy: %q", healthy)
	if color, _ := ts.tmux("capture-pane", "-p", "-e", "-t", ts.name); !strings.Contains(color, "MCP 2/2 ok") {
		t.Logf("(with escapes the line reads differently:)\n%s", color)
	}

	exServer := func(argv []string) bool {
		return exampleMatch(argv) && !strings.Contains(strings.Join(argv, " "), "--fail-starts")
	}
	if _, err := s.killServer(exServer); err != nil {
		t.Fatal(err)
	}
	restarted := ts.statusLine("after a kill", `MCP 2/2 · ex restarted \d+s ago`)
	t.Logf("after kill -9 of a server: %q", restarted)

	if err := os.WriteFile(loop, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.killServer(serverMatch("example-server", "--fail-starts")); err != nil {
		t.Fatal(err)
	}
	failing := ts.statusLine("after a crash loop", `MCP 1/2 · run /mcp-heal doctor loop: crash loop( · \+1 more)?`)
	t.Logf("after a crash loop of loop: %q", failing)
	t.Logf("the screen:\n%s", ts.capture())
	if n := len(s.model.Main()); !plugin && n != 0 {
		t.Errorf("without the plugin the model was asked %d times: the line was not redrawn by refreshInterval alone", n)
	}
	ts.quit()
}

// installStatusLine installs `mcp-heal statusline` as the statusLine of
// the session's HOME, the way a user does (`mcp-heal statusline
// --install`).
func (s *session) installStatusLine(t *testing.T) {
	t.Helper()
	if out, err := s.mcpHeal("statusline", "--install"); err != nil || !strings.Contains(string(out), "Added the statusLine") {
		t.Fatalf("statusline --install: %v\n%s", err, out)
	}
}

// statusLine waits up to 90 s for a line of the screen that matches re
// (the status line) and returns it, as the screen shows it; the test
// fails if none does (what names the moment).
func (ts *tmuxSession) statusLine(what, re string) string {
	ts.t.Helper()
	rx := regexp.MustCompile(`(?m)^\s*(` + re + `)\s*$`)
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(ts.capture()); m != nil {
			return m[1]
		}
		time.Sleep(200 * time.Millisecond)
	}
	ts.t.Fatalf("%s: no status line matching %q on the screen\n%s", what, re, ts)
	return ""
}

// TestClearKeepsServers: /clear gives the interactive session a new
// session id (SessionStart "clear", and every later hook payload and the
// status line's carry it), while Claude Code keeps its MCP servers, and
// so the shims, which recorded the old id. They are still the session's
// servers: the status line, the hooks and the monitor find them by the
// Claude Code they run under ($CLAUDE_PID, the shim's parent) as well as
// by the id. Before, the line went blank after /clear and a server
// restarted after it was never shown.
func TestClearKeepsServers(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code and tmux")
	s := newSession(t,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "one"})}},
		Turn{Text: "Done."},
	)
	s.withPlugin()
	s.addExample("ex", true, nil)
	s.installStatusLine(t)
	ts := s.startInteractive("❯", time.Minute)
	line := func(what, re string) {
		t.Helper()
		t.Logf("%s: %q", what, ts.statusLine(what, re))
	}
	ts.ask("Echo one.", 1, "the first call never ended")
	line("before /clear", `MCP 1/1 ok`)
	before := s.shimRecords()
	if len(before) != 1 {
		t.Fatalf("%d shim records, want 1", len(before))
	}

	ts.typeLine("/clear")
	// The line is drawn again under the new id (refreshInterval 5 s).
	time.Sleep(6 * time.Second)
	line("after /clear", `MCP 1/1 ok`)
	if _, err := s.killServer(exampleMatch); err != nil {
		t.Fatal(err)
	}
	line("after /clear and a kill", `MCP 1/1 · ex restarted \d+s ago`)
	after := s.shimRecords()
	if len(after) != 1 || after[0].ShimPID != before[0].ShimPID || after[0].Session != before[0].Session {
		t.Fatalf("shim records after /clear: %+v; want the same shim under the first session id %s", after, before[0].Session)
	}
	ts.quit()
}
