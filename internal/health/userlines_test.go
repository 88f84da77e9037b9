package health_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/user-lines.golden")

// userLine is one line mcp-heal shows the user: where (the monitor, a
// hook's systemMessage, a status note), which case, and the line as
// printed. info marks a line that asks nothing of anyone (a status note
// that only describes).
type userLine struct {
	where, name, line string
	info              bool
}

// actionLeads are how a line may start after "mcp-heal: " (or a status
// note's "  NAME: "): what to do comes first.
var actionLeads = []string{
	"run ", "Run '", "wait, or run ", "nothing to run", "ask the user to run ", "approve them interactively, then run ",
	"restart Claude Code, or run ", "fix the ", "fix it ", "to restart MCP server ",
}

// userLines builds every line the monitor, the hooks' systemMessage and
// status's notes can print, for a server named "notes" (short names are
// the common case; a longer name moves the action's end by its length).
func userLines() []userLine {
	now := time.Date(2026, 12, 7, 13, 5, 40, 0, time.Local)
	sig9 := &state.Exit{Cause: state.CauseSignal, SignalNum: 9, Signal: "killed"}
	code := 3
	exit3 := &state.Exit{Cause: state.CauseExit, Code: &code}
	rec := func(mut func(*state.Record)) *state.Record {
		r := &state.Record{Server: "notes", Mode: state.ModeStdio, State: state.Running, ChildPID: 2, Restarts: 1, LastExit: sig9}
		if mut != nil {
			mut(r)
		}
		return r
	}
	gone := &state.Gone{Record: *rec(nil), FoundGone: now}
	gone.Updated = now.Add(-time.Second)
	quiet := &state.NotAnswering{Since: now.Add(-12 * time.Second), Method: "tools/call", Tool: "search"}
	cancelled := &state.NotAnswering{Since: now.Add(-12 * time.Second), Method: "tools/call", Tool: "search", Cancelled: true}
	var out []userLine
	add := func(where, name, line string) { out = append(out, userLine{where: where, name: name, line: line}) }
	info := func(where, name, line string) {
		out = append(out, userLine{where: where, name: name, line: line, info: true})
	}

	// The plugin's monitor: the model reads these, and the user sees them
	// cut at the screen's width.
	add("monitor", "restarted", health.MonitorRestarted(rec(nil)))
	add("monitor", "reconnected (remote)", health.MonitorRestarted(rec(func(r *state.Record) {
		r.Mode, r.LastExit = state.ModeRemote, &state.Exit{Cause: state.CauseRemote, Detail: "session lost (HTTP 404)"}
	})))
	add("monitor", "crash loop", health.MonitorFailing(rec(func(r *state.Record) {
		r.State, r.Failure, r.LastExit, r.StderrTail = state.Failed, string(health.ShimFailed), exit3, []string{"Error: TOKEN is not set"}
	})))
	add("monitor", "cannot start", health.MonitorFailing(rec(func(r *state.Record) {
		r.State, r.Failure, r.LastError = state.Failed, string(health.CannotStart), "command not found: /opt/notes/bin/notes-server"
	})))
	add("monitor", "works again", health.MonitorRecovered(rec(nil)))
	add("monitor", "not answering", health.MonitorNotAnswering(rec(func(r *state.Record) { r.NotAnswering = quiet }), now))
	add("monitor", "not answering since a cancel", health.MonitorNotAnswering(rec(func(r *state.Record) { r.NotAnswering = cancelled }), now))
	add("monitor", "shim died", health.MonitorShimGone(gone))

	// The hooks' one line to the user (systemMessage).
	sit := func(c health.Class, mut func(*health.Situation)) health.Situation {
		s := health.Situation{Server: "notes", Class: c}
		if mut != nil {
			mut(&s)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		s    health.Situation
	}{
		{"hung, restarted through its shim", sit(health.IdleTimeout, func(s *health.Situation) { s.Action = health.ActSighup })},
		{"died, restarted through its shim", sit(health.ConnClosed, func(s *health.Situation) { s.Action = health.ActSighup })},
		{"hung, stopped (unwrapped)", sit(health.IdleTimeout, func(s *health.Situation) { s.Action = health.ActKilledHung })},
		{"hung, could not stop", sit(health.IdleTimeout, func(s *health.Situation) { s.Stuck = true })},
		{"crash loop", sit(health.ShimFailed, nil)},
		{"cannot start", sit(health.CannotStart, nil)},
		{"disconnected", sit(health.Disconnected, nil)},
		{"disconnected, headless", sit(health.Disconnected, func(s *health.Situation) { s.Headless = true })},
		{"disconnected, command gone", sit(health.NotConnected, func(s *health.Situation) {
			s.Probe = health.Found{Probed: true, Why: "command not found: /opt/notes/bin/notes-server"}
		})},
		{"disconnected, command gone, headless", sit(health.NotConnected, func(s *health.Situation) {
			s.Probe, s.Headless = health.Found{Probed: true, Why: "command not found: /opt/notes/bin/notes-server"}, true
		})},
		{"session lost (remote)", sit(health.SessionLost, nil)},
		{"its shim died", sit(health.ConnClosed, func(s *health.Situation) { s.ShimGone = health.ShimGone(gone) })},
	} {
		if _, line := health.UserLine(tc.s); line != "" {
			add("systemMessage", tc.name, line)
		}
	}
	add("systemMessage", "PreToolUse: not answering since a cancel", health.CancelledUserLine("notes", cancelled, now))
	add("systemMessage", "SessionStart: failing", health.SessionNotice([]string{"notes"}, nil, nil, nil))
	add("systemMessage", "SessionStart: unprotected", health.SessionNotice(nil, []string{"notes", "web"}, nil, nil))
	add("systemMessage", "SessionStart: unapproved, headless", health.SessionNotice(nil, nil, []string{"notes"}, nil))
	add("systemMessage", "SessionStart: protected by a local copy", health.SessionNotice(nil, nil, nil, []string{"notes"}))
	add("systemMessage", "SessionStart: all at once", health.SessionNotice([]string{"a"}, []string{"b"}, []string{"c"}, []string{"d"}))
	add("systemMessage", "SessionStart: blocked by policy", health.BlockedNotice([]string{"notes"}))

	// status's notes, "  NAME: detail", inside Claude Code (/mcp-heal
	// status) and in a shell.
	for _, a := range []health.Audience{health.Claude, health.Shell} {
		where := "status (" + map[health.Audience]string{health.Claude: "/mcp-heal", health.Shell: "shell"}[a] + ")"
		note := func(name string, e health.Entry, shim *state.Record, in *state.Incident) {
			e.Name, e.Wrapped = "notes", e.Wrapped || e.Drift == "" && e.Policy == nil
			v := health.Judge(e, shim, in, now, a)
			if v.Detail != "" {
				add(where, name+" ("+v.Health+")", "  notes: "+v.Detail)
			}
		}
		inc := func(c health.Class, session string) *state.Incident {
			return &state.Incident{Server: "notes", Class: string(c), Time: now.Add(-time.Minute), Session: session}
		}
		note("disconnected, this session", health.Entry{}, nil, inc(health.Disconnected, ""))
		note("disconnected, another session", health.Entry{}, nil, inc(health.Disconnected, "5f1d0c7e-aaaa"))
		note("crash loop", health.Entry{}, rec(func(r *state.Record) { r.State, r.Failure, r.LastExit = state.Failed, string(health.ShimFailed), exit3 }), nil)
		note("cannot start", health.Entry{}, rec(func(r *state.Record) {
			r.State, r.Failure, r.LastError = state.Failed, string(health.CannotStart), "command not found: /opt/notes/bin/notes-server"
		}), nil)
		note("not answering", health.Entry{}, rec(func(r *state.Record) { r.NotAnswering = quiet }), nil)
		note("not answering since a cancel", health.Entry{}, rec(func(r *state.Record) { r.NotAnswering = cancelled }), nil)
		note("no shim running", health.Entry{}, nil, nil)
		note("its shim died", health.Entry{Gone: gone}, nil, nil)
		add(where, "copy out of date", "  notes: "+health.DriftHint(health.Entry{Name: "notes", Drift: "changed in /home/u/proj/.mcp.json since mcp-heal copied it"}, a))
		add(where, "copy's original removed", "  notes: "+health.DriftHint(health.Entry{Name: "notes", Drift: "removed from /home/u/proj/.mcp.json"}, a))
		add(where, "unprotected servers", health.UnprotectedLine(2, a))
	}
	info("status (shell)", "shadowed", "  notes: "+health.Judge(health.Entry{Name: "notes", Shadowed: true}, nil, nil, now, health.Shell).Detail)
	info("status (shell)", "blocked", "  notes: "+health.Judge(health.Entry{Name: "notes", Policy: &ccpolicy.Decision{Why: "deniedMcpServers in managed settings names it"}}, nil, nil, now, health.Shell).Detail)
	info("status (shell)", "pending", "  notes: "+health.Judge(health.Entry{Name: "notes", Approval: ccpolicy.Pending}, nil, nil, now, health.Shell).Detail)
	info("status (shell)", "not wrapped", "  notes: "+health.Judge(health.Entry{Name: "notes"}, nil, nil, now, health.Shell).Detail)
	info("status (shell)", "idle exit", "  notes: "+health.IdleExited)
	info("status (shell)", "conflicting scopes", "  notes: "+health.ConflictNote("/home/u/proj/.mcp.json"))
	return out
}

// actionEnd is where the action of line ends: after its lead, at the
// first ": " (what follows is what happened), or the line's end.
func actionEnd(rest string) int {
	if i := strings.Index(rest, ": "); i >= 0 {
		return i
	}
	return len(rest)
}

// TestUserLinesGolden (issue 32, item 3): every line the user may see
// puts its action first and fits 80 columns up to the end of the action;
// Claude Code cuts a monitor line at the screen's width, and an action at
// the end was cut off. The lines are kept in testdata/user-lines.golden
// (go test -update rewrites it), each with the column its action ends at.
func TestUserLinesGolden(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Every line mcp-heal shows the user (TestUserLinesGolden), server \"notes\".\n# action: the column the action ends at (at most 80); the line follows.\n")
	for _, u := range userLines() {
		prefix := "mcp-heal: "
		if strings.HasPrefix(u.line, "  notes: ") {
			prefix = "  notes: "
		} else if strings.HasPrefix(u.line, "Run '") {
			prefix = ""
		}
		if !strings.HasPrefix(u.line, prefix) {
			t.Errorf("%s / %s: %q does not start with %q", u.where, u.name, u.line, prefix)
			continue
		}
		rest := u.line[len(prefix):]
		end := "info"
		if !u.info {
			lead := ""
			for _, l := range actionLeads {
				if strings.HasPrefix(rest, l) {
					lead = l
				}
			}
			if lead == "" {
				t.Errorf("%s / %s: the action does not come first: %q", u.where, u.name, u.line)
			}
			n := utf8.RuneCountInString(prefix + rest[:actionEnd(rest)])
			if n > 80 {
				t.Errorf("%s / %s: the action ends at column %d, past 80: %q", u.where, u.name, n, u.line)
			}
			end = fmt.Sprint(n)
		}
		fmt.Fprintf(&b, "\n[%s] %s (action: %s)\n%s\n", u.where, u.name, end, u.line)
	}
	testenv.Golden(t, filepath.Join("testdata", "user-lines.golden"), b.String(), *update, "the user's lines")
}
