package hook

import (
	"strconv"

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
