package hook

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// notAnswering is the PreToolUse reply before a call to server r, which is
// not answering (q): the model's context (this call may wait, and how to
// restart it). A server not answering since its call was cancelled is left
// running by its shim, so the user is told too, once for that silence (of
// every hook racing, the one that wins state.ClaimTold), with the command
// that restarts it.
func (h *Handler) notAnswering(in *Input, r *state.Record, q *state.NotAnswering) []byte {
	now := h.Now()
	out := output{HookSpecificOutput: &specific{HookEventName: PreToolUse, AdditionalContext: health.NotAnsweringContext(in.Server, q, now)}}
	if q.Cancelled {
		key := "cancelled-" + strconv.Itoa(r.ShimPID) + "-" + strconv.FormatInt(q.Since.UnixNano(), 10)
		won, err := state.ClaimTold(key)
		if err != nil {
			h.Log.Warn("claiming the user's line of a server not answering", "server", in.Server, "err", err)
		}
		if won {
			out.SystemMessage = health.CancelledUserLine(in.Server, q, now)
		}
	}
	return encode(out)
}

// withCancelNews adds to a PreToolUse reply the model's line of each other
// server of the session not answering since its call was cancelled, once
// per silence, in a session with no monitor (headless: `claude -p`), where
// the next hook is the only way to tell the model; in an interactive
// session the plugin's monitor tells it. A call to that server itself gets
// its own context (notAnswering).
func (h *Handler) withCancelNews(in *Input, reply []byte) []byte {
	if !h.headless() || in.Session == "" {
		return reply
	}
	recs, err := state.FindSession(in.Session, h.claudePID())
	if err != nil {
		return reply
	}
	var lines []string
	for _, r := range recs {
		q := r.Quiet()
		if q == nil || !q.Cancelled || r.Server == in.Server {
			continue
		}
		won, err := state.ClaimTold("cancelled-model-" + strconv.Itoa(r.ShimPID) + "-" + strconv.FormatInt(q.Since.UnixNano(), 10))
		if err != nil {
			h.Log.Warn("claiming the model's line of a server not answering", "server", r.Server, "err", err)
		}
		if won {
			lines = append(lines, health.NotAnsweringContext(r.Server, q, h.Now()))
		}
	}
	if len(lines) == 0 {
		return reply
	}
	var out output
	if len(reply) > 0 && json.Unmarshal(reply, &out) != nil {
		return reply
	}
	if out.HookSpecificOutput == nil {
		out.HookSpecificOutput = &specific{HookEventName: PreToolUse}
	}
	if c := out.HookSpecificOutput.AdditionalContext; c != "" {
		lines = append([]string{c}, lines...)
	}
	out.HookSpecificOutput.AdditionalContext = strings.Join(lines, "\n")
	return encode(out)
}
