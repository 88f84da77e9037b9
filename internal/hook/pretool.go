package hook

import (
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// preToolUse runs before an MCP tool call when the attention directory is
// not empty (the launcher answers the healthy path by itself). It denies
// the call of a failed shim, warns before a call to a server Claude Code
// gave up on, and closes the incident of a server whose last call did not
// fail. It reads the live shims and the incident log's tail: no config
// discovery, no probe.
func (h *Handler) preToolUse(in *Input) []byte {
	if in.Server == "" {
		h.Log.Warn("PreToolUse payload without an MCP server", "tool", in.ToolName)
		return nil
	}
	if recs, _ := state.Find(in.Server, in.Session, h.claudePID()); len(recs) > 0 {
		r := latest(recs)
		switch r.State {
		case state.Failed:
			c, why := health.ShimClass(r), health.ExitSummary(r)
			if c == health.CannotStart {
				why = r.LastError
			}
			reason := health.Deny(in.Server, c, why)
			inc := state.Incident{Session: in.Session, Server: in.Server, Tool: in.ToolName, Event: PreToolUse, Class: string(c), Error: why, Action: health.ActDenied, Advice: reason}
			line := h.tell(&inc, health.Situation{Server: in.Server, Class: c, Shim: why, Headless: h.headless()})
			h.record(inc)
			return encode(output{SystemMessage: line, HookSpecificOutput: &specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}})
		default:
			// Running, restarting, backoff, starting: the shim queues
			// the call until the server is back, so let it through
			// silently (and close what the server's last failure
			// opened, once it answers again).
			h.track(in)
			if note := h.restartNote(PreToolUse, r); note != nil {
				return note
			}
			if q := r.Quiet(); q != nil {
				return h.notAnswering(in, r, q)
			}
			return nil
		}
	}
	if inc := h.track(in); inc != nil && health.Class(inc.Class).Dead() && h.firstInTurn(in, in.Server, "dead-"+inc.Class) {
		return contextReply(PreToolUse, health.DeadNotice(in.Server, health.Class(inc.Class), inc.Time, h.headless()))
	}
	return nil
}

// track follows the incident of the called server in this session: it
// returns the one still open (state.IsOpen) after marking this call, or
// nil, after recording the ok that closes it when a call of this session
// went out after it (state.Answered).
func (h *Handler) track(in *Input) *state.Incident {
	now := h.Now()
	inc := state.LatestIncident(h.incidents(), in.Server, in.Session)
	if at, ok := state.ClosedByCall(inc, now); ok {
		// Claude Code runs PreToolUse only for a call it sends, and a
		// call that fails records a newer incident (PostToolUseFailure):
		// the server answered again. A call still running in parallel
		// counts too; if it fails, its incident opens the account again.
		h.record(state.Incident{Session: in.Session, Server: in.Server, Tool: in.ToolName, Event: PreToolUse, Class: string(health.OK), Action: health.ActHealthy})
		h.Log.Debug("incident answered", "server", in.Server, "call", at)
		return nil
	}
	if !state.IsOpen(inc, now) {
		// Nothing open for this server in this session. With nothing
		// open in any session, back to the launcher's healthy path for
		// it; markers of servers whose incidents aged out go too.
		if !h.openAnywhere(in.Server) {
			h.attention(in.Server, false)
		}
		if err := state.StaleAttention(now.Add(-state.IncidentWindow)); err != nil {
			h.Log.Warn("removing stale attention markers", "err", err)
		}
		return nil
	}
	if err := state.MarkCalled(in.Session, in.Server, now); err != nil {
		h.Log.Warn("marking a call", "server", in.Server, "err", err)
	}
	return inc
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

// restartNote gives the model, as context of hook event, the restart
// note the shim r could not add to a result (state.Record.Note: every
// answer since the restart had structuredContent, of which Claude Code
// shows the model nothing else, or was the server's error), unless the
// shim or a parallel hook claimed it first.
func (h *Handler) restartNote(event string, r *state.Record) []byte {
	if r.Note == "" || r.NoteKey == "" {
		return nil
	}
	won, err := state.ClaimTold(r.NoteKey)
	if err != nil {
		h.Log.Warn("claiming a restart note", "server", r.Server, "err", err)
		return nil
	}
	if !won {
		return nil
	}
	return contextReply(event, r.Note)
}
