package hook

import (
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// deadWindow is how long an incident that left a server dead for the
// session is remembered by PreToolUse.
const deadWindow = 30 * time.Minute

// healthyWindow is how far back a success looks for an incident to close.
const healthyWindow = 24 * time.Hour

// preToolUse runs before every MCP tool call, so its healthy path is a
// directory read of the live shims and a stat of the incident log: no
// config discovery, no probe.
func (h *Handler) preToolUse(in *Input) []byte {
	if in.Server == "" {
		h.Log.Warn("PreToolUse payload without an MCP server", "tool", in.ToolName)
		return nil
	}
	if recs := findShims(in.Server, in.Session, h.claudePID()); len(recs) > 0 {
		r := latest(recs)
		switch r.State {
		case state.Failed:
			c, why := health.ShimClass(r), health.ExitSummary(r)
			if c == CannotStart {
				why = r.LastError
			}
			reason := health.Deny(in.Server, c, why)
			h.record(state.Incident{Session: in.Session, Server: in.Server, Tool: in.ToolName, Event: PreToolUse, Class: string(c), Error: why, Action: health.ActDenied, Advice: reason})
			return encode(output{HookSpecificOutput: &specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}})
		default:
			// Restarting, backoff, starting: the shim queues the call
			// until the server is back, so let it through silently.
			return nil
		}
	}
	inc := h.openIncident(in.Server, in.Session, deadWindow)
	if inc == nil || !Class(inc.Class).Dead() {
		// Nothing to say about this server in any session any more:
		// back to the launcher's healthy path for it.
		if h.openIncident(in.Server, "", deadWindow) == nil {
			h.attention(in.Server, false)
		}
		return nil
	}
	return contextReply(PreToolUse, health.DeadNotice(in.Server, Class(inc.Class), inc.Time))
}

// latest returns the most recently updated record.
func latest(recs []*state.Record) *state.Record {
	r := recs[0]
	for _, x := range recs[1:] {
		if x.Updated.After(r.Updated) {
			r = x
		}
	}
	return r
}

// closeIncident closes an open incident of server in session: one of its
// tools answered again.
func (h *Handler) closeIncident(session, server, tool, event string) {
	if server == "" {
		return
	}
	if inc := h.openIncident(server, session, healthyWindow); inc != nil {
		h.record(state.Incident{Session: session, Server: server, Tool: tool, Event: event, Class: string(OK), Action: "healthy"})
	}
}
