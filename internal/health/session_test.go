package health_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// TestHeadlessNeverAsksReconnect: whatever a hook or /mcp-heal status says
// in a headless session (claude -p, where Claude Code refuses `/mcp
// reconnect`), it never asks for `/mcp reconnect`; every advice that does
// in an interactive session says instead what happens.
func TestHeadlessNeverAsksReconnect(t *testing.T) {
	const srv = "srv"
	ask := "/mcp reconnect " + srv
	probes := []health.Found{{}, {Probed: true, Works: true}, {Probed: true, Why: "exited with code 1"}}
	for _, c := range health.Classes() {
		for _, p := range probes {
			for _, sit := range []health.Situation{
				{Server: srv, Class: c, Probe: p},
				{Server: srv, Class: c, Probe: p, Stuck: true},
				{Server: srv, Class: c, Probe: p, Action: health.ActSighup},
			} {
				inter := health.Advice(sit)
				sit.Headless = true
				head := health.Advice(sit)
				if strings.Contains(head, ask) {
					t.Errorf("%s %+v: headless advice asks for %s: %q", c, p, ask, head)
				}
				if strings.Contains(inter, ask) && !strings.Contains(head, "headless (-p) session cannot reconnect it") && !strings.Contains(head, "start a new session") {
					t.Errorf("%s %+v: headless advice says nothing instead: %q", c, p, head)
				}
				if _, line := health.UserLine(sit); strings.Contains(line, ask) {
					t.Errorf("%s: headless user line asks for %s: %q", c, ask, line)
				}
			}
		}
		if c.Dead() {
			now := time.Now()
			if n := health.DeadNotice(srv, c, now, true); strings.Contains(n, ask) {
				t.Errorf("%s: headless PreToolUse notice: %q", c, n)
			}
			v := health.Judge(health.Entry{Name: srv, Wrapped: true}, nil, &state.Incident{Server: srv, Class: string(c), Time: now}, now, health.Claude)
			if d := health.ForHeadless(v.Detail, srv); strings.Contains(d, ask) || !strings.Contains(d, "next session") {
				t.Errorf("%s: headless status detail %q", c, d)
			}
		}
	}
}

// TestHeadlessFromEnv: the environment Claude Code gives hooks and the
// Bash tool says which session is headless (measured on 2.1.328 and
// 2.1.332).
func TestHeadlessFromEnv(t *testing.T) {
	for _, tt := range []struct {
		entry, attended string
		want            bool
	}{{"sdk-cli", "0", true}, {"cli", "1", false}, {"", "", false}, {"sdk-ts", "", true}} {
		env := map[string]string{"CLAUDE_CODE_ENTRYPOINT": tt.entry, "CLAUDE_CODE_SESSION_ATTENDED": tt.attended}
		if got := health.Headless(func(k string) string { return env[k] }); got != tt.want {
			t.Errorf("%+v: Headless = %v", tt, got)
		}
	}
}

// A running server that owes a call and gives no sign of life is "not
// answering" in status, for how long and which call, with heal as the way
// to restart it; once the shim clears the field it is ok again.
func TestJudgeNotAnswering(t *testing.T) {
	now := time.Now()
	r := state.Record{Server: "srv", State: state.Running, NotAnswering: &state.NotAnswering{Since: now.Add(-75 * time.Second), Method: "tools/call", Tool: "crunch"}}
	v := health.Judge(health.Entry{Name: "srv", Wrapped: true}, &r, nil, now, health.Claude)
	if v.Health != health.NotAnsweringHealth || !strings.HasPrefix(v.Detail, `wait, or run /mcp-heal heal srv to restart it: not answering for 1m15s (a call of its tool "crunch" outstanding;`) || !strings.Contains(v.Detail, "/mcp-heal heal srv") {
		t.Fatalf("got %+v", v)
	}
	r.NotAnswering = nil
	if v := health.Judge(health.Entry{Name: "srv", Wrapped: true}, &r, nil, now, health.Claude); v.Health != health.Healthy {
		t.Fatalf("once it answers: got %+v", v)
	}
}

// A server that has answered nothing since its call was cancelled is left
// running (issue 30): every reader is told the command first, what it
// costs, and since when; the model's line names the command it can run
// with the Bash tool, and says a new call may wait.
func TestJudgeNotAnsweringSinceCancel(t *testing.T) {
	now := time.Now()
	q := &state.NotAnswering{Since: now.Add(-12 * time.Second), Method: "tools/call", Tool: "fetch", Cancelled: true}
	r := state.Record{Server: "srv", State: state.Running, NotAnswering: q}
	v := health.Judge(health.Entry{Name: "srv", Wrapped: true}, &r, nil, now, health.Shell)
	if v.Health != health.NotAnsweringHealth || v.Detail != `run mcp-heal heal srv to restart it: it has answered nothing, not even a ping, since a call of its tool "fetch" was cancelled 12s ago; it may still be waiting on something and finish by itself, so mcp-heal leaves it running (a restart loses what it holds in memory)` {
		t.Fatalf("status: %+v", v)
	}
	// The PreToolUse context is the model's alone: the Bash command first.
	if line := health.NotAnsweringContext("srv", q, now); !strings.HasPrefix(line, "mcp-heal: to restart MCP server \"srv\", run `mcp-heal heal srv` with the Bash tool (whatever the server holds in memory is lost).") ||
		!strings.Contains(line, `since a call of its tool "fetch" was cancelled 12s ago`) || !strings.Contains(line, "a new call to it may wait") || strings.Contains(line, "\n") {
		t.Errorf("the model's line: %q", line)
	}
	// The monitor's line is on the user's screen too: the user's command
	// first, then the account, with the command the model can run.
	if line := health.MonitorNotAnswering(&r, now); !strings.HasPrefix(line, `mcp-heal: wait, or run /mcp-heal heal srv: MCP server "srv" has answered nothing`) ||
		!strings.Contains(line, `since a call of its tool "fetch" was cancelled 12s ago`) || !strings.Contains(line, "a new call to it may wait") ||
		!strings.Contains(line, "To restart it, run `mcp-heal heal srv` with the Bash tool (whatever the server holds in memory is lost).") || strings.Contains(line, "\n") {
		t.Errorf("the monitor's line: %q", line)
	}
}
