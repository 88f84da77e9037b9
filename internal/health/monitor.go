package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// The plugin's monitor (internal/monitor) tells the model of a change of
// one of its session's servers in one line, as it happens: Claude Code
// hands every line a monitor prints to the model as a task notification,
// which wakes an idle session (docs/claude-code-behaviour.md, "Plugin
// monitors"). Each line says what happened, whether the server's state
// was lost, and what to do; a server's own words are quoted and
// attributed by the one rule (text.Said), never mcp-heal's.

// Every line the user may see puts its action first, then what happened
// (issue 32: Claude Code cuts a monitor line at the screen's width, and an
// action at its end was cut off): "mcp-heal: <action>: <what>" fits 80
// columns for a short server name; the longer account follows for the
// model (TestUserLinesGolden).

// MonitorRestarted is the line for a server the shim restarted (r its
// record, now up again): the restart note the first result would carry.
func MonitorRestarted(r *state.Record) string {
	c := recordCause(r)
	return fmt.Sprintf("mcp-heal: nothing to run: MCP server %s %s and answers again: %s; %s.", quote(r.Server), restarting(c.Remote, true), c.Clause(), stateLost(c.Remote))
}

// MonitorFailing is the line for a server whose shim gave it up for now
// (r.State failed): a crash loop, or a command that cannot start.
func MonitorFailing(r *state.Record) string {
	q := quote(r.Server)
	doctor := Claude.Cmd("doctor " + text.Name(r.Server))
	if ShimClass(r) == CannotStart {
		why, rest, more := strings.Cut(r.LastError, ": ")
		if more {
			rest = ": " + text.Safe(rest)
		}
		return fmt.Sprintf("mcp-heal: run %s: %s cannot start%s%s. Its calls are refused until its command is fixed: continue without it and ask the user to run %s.", doctor, q, paren(text.Safe(why)), rest, doctor)
	}
	s := fmt.Sprintf("mcp-heal: run %s: MCP server %s is failing (crash loop): %s", doctor, q, recordCause(r).Clause())
	if n := len(r.StderrTail); n > 0 {
		s += "; last, on stderr, " + text.Said("the server", r.StderrTail[n-1])
	}
	return s + fmt.Sprintf("; mcp-heal keeps retrying it and its calls fail meanwhile. Continue without it and ask the user to run %s.", doctor)
}

// MonitorRecovered is the line for a server that works again after its
// shim had given it up.
func MonitorRecovered(r *state.Record) string {
	return fmt.Sprintf("mcp-heal: nothing to run: MCP server %s works again after failing; %s.", quote(r.Server), stateLost(r.Mode == state.ModeRemote))
}

// recordCause is the cause of r's last exit.
func recordCause(r *state.Record) Cause {
	if r.LastExit == nil {
		return Cause{Remote: r.Mode == state.ModeRemote}
	}
	return CauseOf(*r.LastExit, r.Mode == state.ModeRemote)
}

// MonitorNotAnswering is the line for a server that owes a call and has
// given no sign of life (r.NotAnswering, set by the shim), now: what the
// PreToolUse hook would say before the next call.
func MonitorNotAnswering(r *state.Record, now time.Time) string {
	q := r.Quiet()
	if q == nil {
		return ""
	}
	head := fmt.Sprintf("mcp-heal: wait, or run %s: ", Claude.Cmd("heal "+text.Name(r.Server)))
	if q.Cancelled {
		return head + cancelledMonitor(r.Server, q, now)
	}
	return head + strings.TrimPrefix(NotAnsweringContext(r.Server, q, now), "mcp-heal: ")
}
