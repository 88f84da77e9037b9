package statusline

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// TestLine: what the line says for the records of a session, worst news
// first, action first, within 80 columns.
func TestLine(t *testing.T) {
	now := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	rec := fakeshim.Records(now)
	ok := func(name string) *state.Record { return rec(name, state.Running, nil) }
	restarted := func(name string, ago time.Duration) *state.Record {
		return rec(name, state.Running, func(r *state.Record) { r.Restarts = 1; r.ChildStarted = now.Add(-ago) })
	}
	cases := []struct {
		name string
		recs []*state.Record
		want string
	}{
		{"no shim", nil, ""},
		{"only a stopping shim", []*state.Record{rec("a", state.Stopping, nil)}, ""},
		{"healthy", []*state.Record{ok("a"), ok("b"), ok("c")}, "MCP 3/3 ok"},
		{"restarted", []*state.Record{ok("a"), restarted("memory", 2*time.Minute+5*time.Second)}, "MCP 2/2 · memory restarted 2m ago"},
		{"a restart is old news after 15m", []*state.Record{restarted("memory", 16*time.Minute)}, "MCP 1/1 ok"},
		{"restarting", []*state.Record{ok("a"), rec("b", state.Backoff, nil)}, "MCP 1/2 · b restarting"},
		{"starting", []*state.Record{rec("b", state.Starting, nil)}, "MCP 0/1 · b starting"},
		{"crash loop", []*state.Record{ok("a"), rec("loop", state.Failed, func(r *state.Record) { r.Failure = "shim-failed" })}, "MCP 1/2 · run /mcp-heal doctor loop: crash loop"},
		{"cannot start", []*state.Record{rec("gone", state.Failed, func(r *state.Record) { r.Failure = "cannot-start" })}, "MCP 0/1 · run /mcp-heal doctor gone: cannot start"},
		{"not answering", []*state.Record{rec("hang", state.Running, func(r *state.Record) {
			r.NotAnswering = &state.NotAnswering{Since: now.Add(-24 * time.Second), Method: "tools/call"}
		})}, "MCP 0/1 · run /mcp-heal heal hang: not answering 24s"},
		{"worst first, then the rest counted", []*state.Record{
			restarted("a", time.Minute), rec("b", state.Restarting, nil), rec("c", state.Failed, nil), ok("d"),
		}, "MCP 2/4 · run /mcp-heal doctor c: crash loop · +2 more"},
		{"the newest shim of a server speaks for it", []*state.Record{
			rec("a", state.Failed, nil), rec("a", state.Running, func(r *state.Record) { r.Started = now }),
		}, "MCP 1/1 ok"},
		{"a name with escapes is quoted, and left out of the command", []*state.Record{
			rec("\x1b]52;c;cGF3bmVk\x07evil\u202e", state.Failed, nil),
		}, `MCP 0/1 · run /mcp-heal doctor: "\x1b]52;c;cGF3bm…" crash loop`},
		{"a name the rule quotes is quoted, whole when short", []*state.Record{
			rec("a b", state.Failed, nil),
		}, `MCP 0/1 · run /mcp-heal doctor: "a b" crash loop`},
		{"a long name is clipped", []*state.Record{
			rec(strings.Repeat("n", 60), state.Backoff, nil),
		}, "MCP 0/1 · " + strings.Repeat("n", MaxName) + "… restarting"},
	}
	for _, c := range cases {
		got := Line(c.recs, now, false)
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if n := len([]rune(got)); n > 80 {
			t.Errorf("%s: %d columns: %q", c.name, n, got)
		}
		if strings.ContainsAny(got, "\x1b\x07\u202e") {
			t.Errorf("%s: a control character reached the line: %q", c.name, got)
		}
	}
	// The longest line there is: two-digit counts, the longest name a
	// command takes, the longest news, the longest rest.
	var many []*state.Record
	for i := 0; i < 99; i++ {
		many = append(many, rec(strings.Repeat("x", 2)+strings.Repeat("y", i%10)+string(rune('a'+i/10)), state.Backoff, nil))
	}
	many[0] = rec(strings.Repeat("n", MaxName), state.Running, func(r *state.Record) {
		r.NotAnswering = &state.NotAnswering{Since: now.Add(-23 * time.Hour)}
	})
	if got := Line(many, now, false); len([]rune(got)) > 80 || !strings.HasSuffix(got, ": not answering 23h · +98 more") {
		t.Errorf("the longest line, %d columns: %q", len([]rune(got)), got)
	}
	if got := Line([]*state.Record{rec("loop", state.Failed, nil)}, now, true); got != red+"MCP 0/1 · run /mcp-heal doctor loop: crash loop"+reset {
		t.Errorf("in colour: %q", got)
	}
}

// TestColor: NO_COLOR (any value) and TERM=dumb turn colours off.
func TestColor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if !Color(env()) || !Color(env("TERM", "xterm-256color")) {
		t.Error("colours are on by default")
	}
	if Color(env("NO_COLOR", "1")) || Color(env("TERM", "dumb")) {
		t.Error("NO_COLOR or TERM=dumb: no colours")
	}
}
