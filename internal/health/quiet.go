package health

import (
	"fmt"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
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
	return fmt.Sprintf("not answering for %s (%s outstanding; no message, no answer to a ping, no CPU time since): it may be busy in a long call, and mcp-heal restarts no server for silence alone; wait, or run %s to restart it (what it holds in memory is lost)",
		silentFor(q, now), owed(q), a.Cmd("heal "+server))
}

// NotAnsweringContext is what the PreToolUse hook tells the model before
// a call to a server that is not answering.
func NotAnsweringContext(server string, q *state.NotAnswering, now time.Time) string {
	return fmt.Sprintf("mcp-heal: MCP server %q has not answered for %s: %s is still outstanding, with no message, no answer to a ping and no CPU time from the server since. It may be busy in a long call, and this call may wait behind it; if it stays silent, ask the user to run `%s` to restart it (whatever the server holds in memory is lost).",
		server, silentFor(q, now), owed(q), Claude.Cmd("heal "+server))
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
