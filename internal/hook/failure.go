package hook

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

const killGrace = 2 * time.Second

// outcome is what healing did and what the model is told; sit is the
// situation the advice was worded from.
type outcome struct {
	action string
	advice string
	sit    health.Situation
}

func advise(action string, sit health.Situation) outcome {
	return outcome{action, health.Advice(sit), sit}
}

// postToolUseFailure explains (and where it can, heals) an MCP call that
// failed because of its server. A tool's own error is left alone.
func (h *Handler) postToolUseFailure(ctx context.Context, in *Input) []byte {
	if in.IsInterrupt {
		// The call was stopped, not answered: its mark is no evidence
		// that the server works (pretool.go).
		if err := state.ForgetCalled(in.Session, in.Server); err != nil {
			h.Log.Warn("forgetting a call mark", "server", in.Server, "err", err)
		}
		return nil
	}
	if in.Error == "" {
		h.Log.Warn("PostToolUseFailure payload without an error string", "tool", in.ToolName)
		return nil
	}
	m, ok := health.Classify(in.Error)
	if !ok {
		// The server's own error. If its shim restarted it since the
		// model last heard, this is the first answer of the new
		// process: the restart note the error could not carry
		// (state.Record.Note) is given now, once.
		return h.noteOnFailure(in)
	}
	server := in.Server
	if server == "" {
		server = m.Server
	}
	if server == "" {
		return nil
	}
	o := h.heal(ctx, in, server, m)
	inc := state.Incident{Session: in.Session, Server: server, Tool: in.ToolName, Event: PostToolUseFailure, Class: string(m.Class), Error: in.Error, Action: o.action, Advice: o.advice}
	line := h.tell(&inc, o.sit)
	h.record(inc)
	advice := o.advice
	if !h.firstInTurn(in, server, inc.Class+"/"+inc.Action) {
		advice = ""
	}
	return encode(output{SystemMessage: line, HookSpecificOutput: &specific{HookEventName: PostToolUseFailure, AdditionalContext: advice}})
}

// noteOnFailure gives the model, as context of the failed call in, the
// restart note its server's shim published, unless someone told it first.
func (h *Handler) noteOnFailure(in *Input) []byte {
	if in.Server == "" {
		return nil
	}
	recs, _ := state.Find(in.Server, in.Session, h.claudePID())
	if len(recs) == 0 {
		return nil
	}
	return h.restartNote(PostToolUseFailure, latest(recs))
}

// tell decides the one line the user sees about inc (health.UserLine):
// shown once per kind while the server's failures in this session run on
// (state.Continues), so a session whose every call to a dead server fails
// shows the user one line, not one per call. It sets inc.Told.
func (h *Handler) tell(inc *state.Incident, sit health.Situation) string {
	kind, line := health.UserLine(sit)
	prev := state.LatestIncident(h.incidents(), inc.Server, inc.Session)
	if state.Continues(prev, h.Now()) {
		inc.Told = prev.Told
	}
	if kind == "" || inc.Told == kind {
		return ""
	}
	inc.Told = kind
	return line
}

// heal acts on a classified failure of server and says what to tell the
// model.
func (h *Handler) heal(ctx context.Context, in *Input, server string, m health.Match) outcome {
	recs, err := state.Find(server, in.Session, h.claudePID())
	if err != nil {
		h.Log.Warn("listing shims", "err", err)
	}
	if len(recs) > 0 {
		if o, ok := h.healWrapped(in, server, m, latest(recs)); ok {
			return o
		}
	}
	return h.healUnwrapped(in, server, m)
}

// healWrapped handles a server whose shim is alive. ok is false when the
// failure is not the shim's to fix (Claude Code lost the shim itself).
func (h *Handler) healWrapped(in *Input, server string, m health.Match, r *state.Record) (outcome, bool) {
	sit := health.Situation{Server: server, Class: m.Class, RetryIn: m.RetryIn, Headless: h.headless()}
	switch {
	case m.Class == health.ShimFailed || m.Class == health.CannotStart || r.State == state.Failed:
		// The shim keeps trying its server; whether the command works
		// now is for doctor and heal to find out, which the user runs:
		// a hook starts no process from a config entry.
		if c := health.ShimClass(r); c != "" {
			sit.Class = c
		}
		sit.Shim = health.ExitSummary(r)
		if sit.Class == health.CannotStart {
			sit.Shim = r.LastError
		}
		return advise(health.ActNone, sit), true
	case m.Class == health.ShimRestarted:
		// The error the model holds is the shim's own account, in
		// mcp-heal's words (what ended the server, that the call may or
		// may not have taken effect, that it was restarted): a second
		// telling in other words would be a second account (issue 30).
		o := advise(health.ActNone, sit)
		o.advice = ""
		return o, true
	case m.Class == health.IdleTimeout || m.Class == health.RequestTimeout:
		if err := state.SignalShim(r, syscall.SIGHUP, h.Signal); err != nil {
			h.Log.Warn("signalling shim", "pid", r.ShimPID, "err", err)
			return outcome{}, false
		}
		sit.Action = health.ActSighup
		return advise(health.ActSighup, sit), true
	}
	return outcome{}, false
}

// healUnwrapped handles a server Claude Code runs directly.
func (h *Handler) healUnwrapped(in *Input, server string, m health.Match) outcome {
	sit := health.Situation{Server: server, Class: m.Class, RetryIn: m.RetryIn, Headless: h.headless()}
	if gone := state.FindGone(server, in.Session, h.claudePID()); len(gone) > 0 {
		// No shim runs it, and the last one died (killed or crashed):
		// Claude Code lost the server with it (state.Gone).
		sit.ShimGone = health.ShimGone(gone[0])
		if sit.Class == health.ConnClosed || sit.Class == health.ClosedBeforeAnswer || sit.Class.Dead() {
			return advise(health.ActNone, sit)
		}
	}
	s, found := h.configured(in, server)

	// A hung stdio server is never replaced by Claude Code; once it is
	// gone, the next call spawns a fresh one.
	if (m.Class == health.IdleTimeout || m.Class == health.RequestTimeout) && found && s.Transport == "stdio" {
		pids, err := h.findServer(h.claudePID(), s.Command, s.Args)
		if err == nil {
			err = h.stop(pids, killGrace)
		}
		if err == nil {
			sit.Action = health.ActKilledHung
			return advise(health.ActKilledHung, sit)
		}
		h.Log.Warn("stopping hung server", "server", server, "err", err)
		sit.Stuck = true
		return advise(health.ActNone, sit)
	}

	// Whether its command works now is for doctor to find out, which the
	// user runs: a hook starts no process from a config entry. What a
	// look at the file system tells without starting anything (the
	// command is not found, not executable) is said, so that neither the
	// model nor the user is sent to `/mcp reconnect` alone, which would
	// fail again.
	if m.Class.Dead() && found && s.Transport == "stdio" {
		if why, cant := health.StartFailure(s.Command, nil); cant {
			sit.Probe = health.Found{Probed: true, Why: why}
		}
	}
	return advise(health.ActNone, sit)
}

// sessionStart tells the user, in one line, about servers of this project
// that are unprotected or failing. It reads the config and the shim
// records only: no probes, so the session starts fast.
func (h *Handler) sessionStart(in *Input) []byte {
	// Hooks alone get CLAUDE_PLUGIN_DATA: recorded for `mcp-heal paths`
	// run from the `!` line or the Bash tool (state.RecordPluginData).
	if err := state.RecordPluginData(h.Getenv("CLAUDE_PLUGIN_DATA")); err != nil {
		h.Log.Warn("recording the plugin data directory", "err", err)
	}
	all, err := h.Discover(h.options(in))
	if err != nil {
		h.Log.Warn("reading MCP config", "err", err)
	}
	mine := map[string]bool{}
	var unprotected, unapproved, protected, blocked []string
	headless := h.headless()
	for _, s := range all {
		// Pending project servers are not loaded until approved, and
		// wrap leaves them alone until then; except that a headless
		// session (claude -p) starts them unasked
		// (docs/claude-code-behaviour.md): the user hears of that.
		if s.Approval == claudecfg.Pending && headless && !s.Shadowed {
			unapproved = append(unapproved, s.Name)
			continue
		}
		if s.Policy != nil && s.Policy.Code == ccpolicy.DeniedInner && !s.Shadowed {
			blocked = append(blocked, s.Name)
		}
		if !s.Loaded() {
			continue
		}
		mine[s.Name] = true
		if s.Protects != "" && !state.Told(conflictKey(s)) {
			protected = append(protected, s.Name)
			if err := state.MarkTold(conflictKey(s)); err != nil {
				h.Log.Warn("recording a notice", "server", s.Name, "err", err)
			}
		}
		// Plugin servers belong to their plugin's config: wrap cannot
		// rewrite them.
		if !s.Wrapped && s.Scope != claudecfg.ScopePlugin && s.NoWrap == "" {
			unprotected = append(unprotected, s.Name)
		}
	}
	recs, err := state.List()
	if err != nil {
		h.Log.Warn("listing shims", "err", err)
	}
	var failing []string
	for _, r := range recs {
		if r.State == state.Failed && mine[r.Server] && !slices.Contains(failing, r.Server) {
			failing = append(failing, r.Server)
		}
	}
	msg := health.SessionNotice(failing, unprotected, unapproved, protected)
	if len(blocked) > 0 {
		msg = strings.TrimSpace(msg + " " + health.BlockedNotice(blocked))
	}
	if msg == "" {
		return nil
	}
	return encode(output{SystemMessage: msg})
}

// conflictKey names the one-time notice about Claude Code's "[Conflicting
// scopes]" warning for a protected project server: once per server and
// .mcp.json.
func conflictKey(s claudecfg.Server) string { return "conflict-" + s.Name + "-" + s.Protects }
