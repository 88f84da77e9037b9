package hook

import "github.com/mcp-heal/mcp-heal/internal/state"

// firstInTurn reports whether this hook is the one to give the model
// context about what happened to server in this turn (what: the
// incident's class and what the hook did about it, so a new action is
// told): of every hook of the prompt in.PromptID that has the same to
// say, exactly one wins (state.ClaimTold), so 21 calls failing in one turn
// give the model one block, not 21 copies (Claude Code sends one role
// "system" block per hook run: docs/claude-code-behaviour.md). The block
// stays in the conversation; the next prompt hears of the incident again.
// Without a prompt id (an older Claude Code), or when the claim cannot be
// made, every hook tells: too much context is the lesser harm.
func (h *Handler) firstInTurn(in *Input, server, what string) bool {
	if in.PromptID == "" {
		return true
	}
	won, err := state.ClaimTold("context-" + in.Session + "-" + in.PromptID + "-" + server + "-" + what)
	if err != nil {
		h.Log.Warn("claiming the model's context for a turn", "server", server, "err", err)
		return true
	}
	return won
}
