package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// NotAnsweringHealth is the health `status` shows for a server that owes
// a call and has given no sign of life for a while (state.NotAnswering).
const NotAnsweringHealth = "not answering"

// NotAnswering says, for status and doctor, that the server of r owes a
// call and has given no sign of life since r.NotAnswering.Since, and what
// the reader can do ("" when r says nothing of it). mcp-heal does not act
// on silence alone: a server may be busy in a long call and unable to
// answer a ping meanwhile.
func NotAnswering(r *state.Record, server string, now time.Time, a Audience) string {
	q := r.Quiet()
	if q == nil {
		return ""
	}
	if q.Cancelled {
		return notAnsweringCancelled(q, server, now, a)
	}
	return fmt.Sprintf("wait, or run %s to restart it: not answering for %s (%s outstanding; no message, no answer to a ping, no CPU time since); it may be busy in a long call, and mcp-heal restarts no server for silence alone (a restart loses what it holds only in memory)",
		a.Cmd("heal "+text.Name(server)), silentFor(q, now), owed(q))
}

// NotAnsweringContext is what the PreToolUse hook tells the model before
// a call to a server that is not answering.
func NotAnsweringContext(server string, q *state.NotAnswering, now time.Time) string {
	if q.Cancelled {
		return cancelledContext(server, q, now)
	}
	return fmt.Sprintf("mcp-heal: MCP server %s has not answered for %s: %s is still outstanding, with no message, no answer to a ping and no CPU time from the server since. It may be busy in a long call, and this call may wait behind it; if it stays silent, ask the user to run `%s` to restart it (whatever the server holds in memory is lost).",
		text.QuotedName(server), silentFor(q, now), owed(q), Claude.Cmd("heal "+text.Name(server)))
}

func silentFor(q *state.NotAnswering, now time.Time) string {
	return now.Sub(q.Since).Round(time.Second).String()
}

// owed names the call a silent server owes. The tool's name comes from the
// server's own tools/list: quoted.
func owed(q *state.NotAnswering) string {
	if q.Tool != "" {
		return fmt.Sprintf("a call of its tool %q", q.Tool)
	}
	return q.Method
}

// notAnsweringCancelled is NotAnswering for a server that has answered
// nothing since the client cancelled its call (q.Cancelled): action
// first. The shim leaves it running: nothing tells a server waiting on I/O
// from a hung one, and alone it would finish the call and keep its state.
func notAnsweringCancelled(q *state.NotAnswering, server string, now time.Time, a Audience) string {
	return fmt.Sprintf("run %s to restart it: it has answered nothing, not even a ping, since %s was cancelled %s ago; it may still be waiting on something and finish by itself, so mcp-heal leaves it running (a restart loses what it holds in memory)",
		a.Cmd("heal "+text.Name(server)), owed(q), silentFor(q, now))
}

// cancelledContext is what the model is told, once by the monitor and
// before each call to the server by the PreToolUse hook, of a server that
// has answered nothing since its call was cancelled: the command first, to
// run with the Bash tool (the plugin's bin/ is on its PATH), and what it
// costs; then why a new call may wait.
func cancelledContext(server string, q *state.NotAnswering, now time.Time) string {
	return fmt.Sprintf("mcp-heal: to restart MCP server %s, run `%s` with the Bash tool (whatever the server holds in memory is lost). It has answered nothing, not even a ping, since %s was cancelled %s ago: it may still be waiting on something and finish by itself, so mcp-heal leaves it running, and a new call to it may wait behind that one.",
		text.QuotedName(server), Shell.Cmd("heal "+text.Name(server)), owed(q), silentFor(q, now))
}

// cancelledMonitor is the monitor's account of a server not answering
// since its call was cancelled, after the user's action: the model reads
// it too, and is given the form of the command it can run (Bash).
func cancelledMonitor(server string, q *state.NotAnswering, now time.Time) string {
	return fmt.Sprintf("MCP server %s has answered nothing, not even a ping, since %s was cancelled %s ago. It may still be waiting on something and finish by itself, so mcp-heal leaves it running; a new call to it may wait behind that one. To restart it, run `%s` with the Bash tool (whatever the server holds in memory is lost).",
		text.QuotedName(server), owed(q), silentFor(q, now), Shell.Cmd("heal "+text.Name(server)))
}

// CancelledUserLine is the user's one line, inside Claude Code, of a
// server not answering since its call was cancelled: the command first.
func CancelledUserLine(server string, q *state.NotAnswering, now time.Time) string {
	return "mcp-heal: " + strings.Replace(notAnsweringCancelled(q, server, now, Claude), "to restart it:", "to restart MCP server "+text.QuotedName(server)+":", 1)
}
