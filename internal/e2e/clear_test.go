//go:build unix

package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

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
	if out, err := s.mcpHeal("statusline", "--install"); err != nil || !strings.Contains(string(out), "Added the statusLine") {
		t.Fatalf("statusline --install: %v\n%s", err, out)
	}
	ts := s.startInteractive("❯", time.Minute)
	line := func(what, re string) {
		t.Helper()
		rx := regexp.MustCompile(`(?m)^\s*(` + re + `)\s*$`)
		deadline := time.Now().Add(90 * time.Second)
		for time.Now().Before(deadline) {
			if m := rx.FindStringSubmatch(ts.capture()); m != nil {
				t.Logf("%s: %q", what, m[1])
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: no status line matching %q on the screen\n%s", what, re, ts)
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
