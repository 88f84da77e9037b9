package hook

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// deadWindow is how long an incident that left a server dead for the
// session is remembered by PreToolUse.
const deadWindow = 30 * time.Minute

// healthyWindow is how far back PostToolUse looks for an incident to close.
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
			reason := fmt.Sprintf("mcp-heal: MCP server %q is crash-looping (%s), so this call was not sent; mcp-heal keeps restarting it in the background. Continue without this server and ask the user to fix it (`/mcp-heal doctor %s`); `/mcp-heal heal %s` then restarts it at once.",
				in.Server, ExitSummary(r), in.Server, in.Server)
			h.record(state.Incident{Session: in.Session, Server: in.Server, Tool: in.ToolName, Event: PreToolUse, Class: string(ShimFailed), Error: ExitSummary(r), Action: "denied", Advice: reason})
			return encode(output{HookSpecificOutput: &specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}})
		default:
			// Restarting, backoff, starting: the shim queues the call
			// until the server is back, so let it through silently.
			return nil
		}
	}
	inc := h.openIncident(in.Server, in.Session, deadWindow)
	if inc == nil || !deadForSession(Class(inc.Class)) {
		// Nothing to say about this server in any session any more:
		// back to the launcher's healthy path for it.
		if h.openIncident(in.Server, "", deadWindow) == nil {
			h.attention(in.Server, false)
		}
		return nil
	}
	text := fmt.Sprintf("mcp-heal: MCP server %q was found disconnected at %s (%s) and Claude Code does not reconnect it by itself; if this call fails, continue without it and ask the user to run `/mcp reconnect %s`.",
		in.Server, inc.Time.Local().Format("15:04:05"), inc.Class, in.Server)
	return contextReply(PreToolUse, text)
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

// ExitSummary says in a few words how a shim's child last ended: exit
// status, last error, last stderr line, restarts.
func ExitSummary(r *state.Record) string {
	var parts []string
	if r.LastExit != nil {
		switch {
		case r.LastExit.Reason != "":
			parts = append(parts, r.LastExit.Reason)
		case r.LastExit.Code != nil:
			parts = append(parts, fmt.Sprintf("exited with code %d", *r.LastExit.Code))
		case r.LastExit.Signal != "":
			parts = append(parts, "killed by signal "+r.LastExit.Signal)
		}
	}
	if r.LastError != "" && (len(parts) == 0 || !strings.Contains(parts[0], r.LastError)) {
		parts = append(parts, r.LastError)
	}
	if n := len(r.StderrTail); n > 0 {
		parts = append(parts, "stderr: "+r.StderrTail[n-1])
	}
	if r.Restarts > 0 {
		parts = append(parts, fmt.Sprintf("%d restarts", r.Restarts))
	}
	if len(parts) == 0 {
		return "no exit status recorded"
	}
	s := strings.Join(parts, "; ")
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}

// postToolUse closes an open incident of the server: it answered again.
func (h *Handler) postToolUse(in *Input) {
	if in.Server == "" {
		return
	}
	if inc := h.openIncident(in.Server, in.Session, healthyWindow); inc != nil {
		h.record(state.Incident{Session: in.Session, Server: in.Server, Tool: in.ToolName, Event: PostToolUse, Class: string(OK), Action: "healthy"})
	}
}
