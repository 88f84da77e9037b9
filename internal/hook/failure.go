package hook

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Actions recorded in incidents.
const (
	ActSighup      = "sighup-shim"   // asked a wrapped server's shim to restart its child
	ActKilledHung  = "killed-hung"   // stopped a hung unwrapped server
	ActProbedOK    = "probed-ok"     // the server's command or URL works now
	ActProbedFail  = "probed-failed" // it does not
	ActNone        = "none"
	killGrace      = 2 * time.Second
	maxBatchAdvice = 3
)

// outcome is what healing did and what the model is told.
type outcome struct {
	action string
	advice string
}

// postToolUseFailure explains (and where it can, heals) an MCP call that
// failed because of its server. A tool's own error is left alone.
func (h *Handler) postToolUseFailure(ctx context.Context, in *Input) []byte {
	if in.IsInterrupt {
		return nil
	}
	if in.Error == "" {
		h.Log.Warn("PostToolUseFailure payload without an error string", "tool", in.ToolName)
		return nil
	}
	m, ok := Classify(in.Error)
	if !ok {
		return nil
	}
	server := in.Server
	if server == "" {
		server = m.Server
	}
	if server == "" {
		return nil
	}
	o := h.heal(ctx, in, server, m)
	h.record(state.Incident{Session: in.Session, Server: server, Tool: in.ToolName, Event: PostToolUseFailure, Class: string(m.Class), Error: in.Error, Action: o.action, Advice: o.advice})
	return contextReply(PostToolUseFailure, o.advice)
}

// postToolBatch handles what only PostToolBatch sees: calls Claude Code
// refused because the tool is "not available" (a server in cool-down, or
// a stdio server it gave up on). Errors of calls that ran were already
// handled by PostToolUseFailure.
func (h *Handler) postToolBatch(ctx context.Context, in *Input) []byte {
	seen := map[string]bool{}
	var advice []string
	for _, c := range in.Calls {
		if !c.IsString || !strings.HasPrefix(strings.TrimSpace(c.Response), "<tool_use_error>") {
			continue
		}
		m, ok := Classify(c.Response)
		if !ok {
			continue
		}
		server := m.Server
		if server == "" {
			server = ServerFromTool(c.ToolName)
		}
		if server == "" || seen[server] {
			continue
		}
		seen[server] = true
		o := h.heal(ctx, in, server, m)
		h.record(state.Incident{Session: in.Session, Server: server, Tool: c.ToolName, Event: PostToolBatch, Class: string(m.Class), Error: c.Response, Action: o.action, Advice: o.advice})
		if len(advice) < maxBatchAdvice {
			advice = append(advice, o.advice)
		}
	}
	if len(advice) == 0 {
		return nil
	}
	return contextReply(PostToolBatch, strings.Join(advice, " "))
}

// heal acts on a classified failure of server and says what to tell the
// model.
func (h *Handler) heal(ctx context.Context, in *Input, server string, m Match) outcome {
	recs, err := state.Find(server, in.Session, h.claudePID())
	if err != nil {
		h.Log.Warn("listing shims", "err", err)
	}
	if len(recs) > 0 {
		if o, ok := h.healWrapped(ctx, in, server, m, latest(recs)); ok {
			return o
		}
	}
	return h.healUnwrapped(ctx, in, server, m)
}

// healWrapped handles a server whose shim is alive. ok is false when the
// failure is not the shim's to fix (Claude Code lost the shim itself).
func (h *Handler) healWrapped(ctx context.Context, in *Input, server string, m Match, r *state.Record) (outcome, bool) {
	q := fmt.Sprintf("%q", server)
	switch {
	case m.Class == ShimFailed || r.State == state.Failed:
		s, found := h.configured(in, server)
		if !found {
			return outcome{ActNone, fmt.Sprintf("mcp-heal: MCP server %s is crash-looping (%s); mcp-heal keeps restarting it, but calls fail until it starts. Continue without it and ask the user to fix it (`/mcp-heal doctor %s`); `/mcp-heal heal %s` then restarts it at once.", q, ExitSummary(r), server, server)}, true
		}
		res := h.Probe(ctx, s, h.options(in).ProjectDir)
		if !res.OK {
			return outcome{ActProbedFail, fmt.Sprintf("mcp-heal: MCP server %s is crash-looping (%s) and its command still fails now (%s). Continue without it and ask the user to fix that (`/mcp-heal doctor %s`); `/mcp-heal heal %s` then restarts it at once.", q, ExitSummary(r), res.Line(), server, server)}, true
		}
		if err := state.SignalShim(r, syscall.SIGHUP, h.Signal); err != nil {
			h.Log.Warn("signalling shim", "pid", r.ShimPID, "err", err)
			return outcome{ActProbedOK, fmt.Sprintf("mcp-heal: MCP server %s had stopped after repeated crashes (%s); its command works now but mcp-heal could not restart it: ask the user to run `/mcp-heal heal %s`, then retry.", q, ExitSummary(r), server)}, true
		}
		return outcome{ActSighup, fmt.Sprintf("mcp-heal: MCP server %s had stopped after repeated crashes (%s), but its command works now, so mcp-heal restarted it: retry the call.", q, ExitSummary(r))}, true
	case m.Class == ShimRestarted:
		return outcome{ActNone, fmt.Sprintf("mcp-heal: MCP server %s's process died during this call and mcp-heal restarted it; the call was not retried and may or may not have taken effect, so check whether it did before retrying it.", q)}, true
	case m.Class == IdleTimeout || m.Class == RequestTimeout:
		if err := state.SignalShim(r, syscall.SIGHUP, h.Signal); err != nil {
			h.Log.Warn("signalling shim", "pid", r.ShimPID, "err", err)
			return outcome{}, false
		}
		return outcome{ActSighup, fmt.Sprintf("mcp-heal: MCP server %s stopped answering, so mcp-heal restarted it; the call may or may not have taken effect, so check whether it did, then retry it.", q)}, true
	}
	return outcome{}, false
}

// healUnwrapped handles a server Claude Code runs directly.
func (h *Handler) healUnwrapped(ctx context.Context, in *Input, server string, m Match) outcome {
	q := fmt.Sprintf("%q", server)
	reconnect := fmt.Sprintf("`/mcp reconnect %s`", server)
	doctor := fmt.Sprintf("`/mcp-heal doctor %s`", server)
	s, found := h.configured(in, server)

	// A hung stdio server is never replaced by Claude Code; once it is
	// gone, the next call spawns a fresh one.
	if (m.Class == IdleTimeout || m.Class == RequestTimeout) && found && s.Transport == "stdio" {
		pids, err := h.findServer(h.claudePID(), s.Command, s.Args)
		if err == nil {
			err = h.stop(pids, killGrace)
		}
		if err == nil {
			return outcome{ActKilledHung, fmt.Sprintf("mcp-heal: MCP server %s was hung, so mcp-heal stopped it and Claude Code starts a fresh one on the next call; this call may or may not have taken effect, so check whether it did, then retry it.", q)}
		}
		h.Log.Warn("stopping hung server", "server", server, "err", err)
		return outcome{ActNone, fmt.Sprintf("mcp-heal: MCP server %s is hung and Claude Code does not replace it; this call may or may not have taken effect. Ask the user to run %s, then check and retry.", q, reconnect)}
	}

	// The state of the server now, when it can be checked.
	probed, works, why := "", false, ""
	if found && m.Class != ClosedBeforeRun && m.Class != StillConnecting && m.Class != ShimRestarted && m.Class != ShimFailed {
		res := h.Probe(ctx, s, h.options(in).ProjectDir)
		works, why = res.OK, res.Line()
		if works {
			probed = ActProbedOK
		} else {
			probed = ActProbedFail
		}
	}
	act := probed
	if act == "" {
		act = ActNone
	}
	// now picks the advice for what the probe found: works, fails (bad
	// gets the probe's one-line reason), or not probed.
	now := func(ok string, bad func(why string) string, unknown string) string {
		switch {
		case probed == "":
			return unknown
		case works:
			return ok
		}
		return bad(why)
	}

	switch m.Class {
	case ClosedBeforeRun:
		return outcome{act, fmt.Sprintf("mcp-heal: MCP server %s's connection closed before the call ran, so it had no effect: retry it now.", q)}
	case StillConnecting:
		return outcome{act, fmt.Sprintf("mcp-heal: MCP server %s is still starting: wait a few seconds and retry the call.", q)}
	case ShimRestarted:
		return outcome{act, fmt.Sprintf("mcp-heal: MCP server %s's process died during this call and mcp-heal restarted it; the call was not retried and may or may not have taken effect, so check whether it did before retrying it.", q)}
	case IdleTimeout, RequestTimeout:
		return outcome{act, fmt.Sprintf("mcp-heal: MCP server %s did not answer this call in time and may be hung, so the call may or may not have taken effect: check whether it did. %s", q,
			now(fmt.Sprintf("It answers a fresh connection now; if the next call hangs too, ask the user to run %s.", reconnect),
				func(why string) string {
					return "It does not answer a fresh connection either (" + why + "): continue without it and ask the user to check it (" + doctor + ")."
				},
				fmt.Sprintf("If the next call hangs too, ask the user to run %s.", reconnect)))}
	case ConnClosed, ClosedBeforeAnswer:
		what := "lost its connection during this call"
		if m.Class == ConnClosed {
			what = "exited during this call"
		}
		return outcome{act, fmt.Sprintf("mcp-heal: MCP server %s %s, so the call may or may not have taken effect: check whether it did before retrying. %s", q, what,
			now(fmt.Sprintf("Its command works now; if the tool is then unavailable, ask the user to run %s.", reconnect),
				func(why string) string {
					return "Its command now fails (" + why + "): continue without it and ask the user to fix it (" + doctor + ")."
				},
				fmt.Sprintf("If the tool is then unavailable, ask the user to run %s.", reconnect)))}
	case NotConnected, Disconnected:
		return outcome{act, now(
			fmt.Sprintf("mcp-heal: MCP server %s is disconnected and Claude Code will not restart it in this session, but its command works now: ask the user to run %s, then retry.", q, reconnect),
			func(why string) string {
				return "mcp-heal: MCP server " + q + " is disconnected and cannot start (" + why + "); Claude Code will not retry it in this session. Continue without it and ask the user to fix it (" + doctor + "), then run " + reconnect + "."
			},
			fmt.Sprintf("mcp-heal: MCP server %s is disconnected and Claude Code will not restart it in this session: continue without it and ask the user to run %s.", q, reconnect))}
	case SessionLost:
		return outcome{act, now(
			fmt.Sprintf("mcp-heal: MCP server %s restarted and dropped Claude Code's session, which Claude Code does not renew by itself; the server answers now: ask the user to run %s, then retry.", q, reconnect),
			func(why string) string {
				return "mcp-heal: MCP server " + q + " dropped Claude Code's session and does not answer now (" + why + "). Continue without it and ask the user to run " + reconnect + " once it is back."
			},
			fmt.Sprintf("mcp-heal: MCP server %s restarted and dropped Claude Code's session, which Claude Code does not renew by itself: ask the user to run %s, then retry.", q, reconnect))}
	case Cooldown, GaveUp, Refused:
		when := "within a few seconds"
		if m.RetryIn > 0 {
			when = fmt.Sprintf("in about %d s", m.RetryIn)
		}
		return outcome{act, now(
			fmt.Sprintf("mcp-heal: MCP server %s was unreachable but answers again now; Claude Code reconnects to it by itself %s: retry then.", q, when),
			func(why string) string {
				return "mcp-heal: MCP server " + q + " is down (" + why + "); Claude Code keeps retrying it by itself. Continue without it for now and retry later; if it stays down, ask the user to check it (" + doctor + ")."
			},
			fmt.Sprintf("mcp-heal: MCP server %s is unreachable; Claude Code tries it again by itself %s: retry then, and continue without it if it still fails.", q, when))}
	case Reset:
		return outcome{act, now(
			fmt.Sprintf("mcp-heal: the connection to MCP server %s broke during this call, so it may or may not have taken effect; the server answers again now: check whether a call that changes something already ran, then retry.", q),
			func(why string) string {
				return "mcp-heal: the connection to MCP server " + q + " broke during this call, so it may or may not have taken effect, and the server does not answer now (" + why + "); Claude Code keeps retrying it by itself. Continue without it for now and retry later."
			},
			fmt.Sprintf("mcp-heal: the connection to MCP server %s broke during this call, so it may or may not have taken effect: check whether a call that changes something already ran, then retry in a few seconds.", q))}
	case ShimFailed:
		return outcome{act, fmt.Sprintf("mcp-heal: MCP server %s is crash-looping, so this call was not sent. Continue without it and ask the user to fix it (%s); `/mcp-heal heal %s` then restarts it at once.", q, doctor, server)}
	case ShimUnreachable:
		return outcome{act, now(
			fmt.Sprintf("mcp-heal: MCP server %s was unreachable, so this call was not sent; it answers again now: retry the call.", q),
			func(why string) string {
				return "mcp-heal: MCP server " + q + " is unreachable (" + why + "), so this call was not sent; mcp-heal keeps reconnecting in the background. Continue without it and retry later; if it stays down, ask the user to check it (" + doctor + ")."
			},
			fmt.Sprintf("mcp-heal: MCP server %s is unreachable, so this call was not sent; mcp-heal keeps reconnecting in the background: continue without it and retry later.", q))}
	}
	return outcome{act, fmt.Sprintf("mcp-heal: MCP server %s failed (%s): ask the user to run %s.", q, m.Class, doctor)}
}

// sessionStart tells the user, in one line, about servers of this project
// that are unprotected or failing. It reads the config and the shim
// records only: no probes, so the session starts fast.
func (h *Handler) sessionStart(in *Input) []byte {
	all, err := h.Discover(h.options(in))
	if err != nil {
		h.Log.Warn("reading MCP config", "err", err)
	}
	mine := map[string]bool{}
	var unprotected []string
	for _, s := range all {
		if s.Shadowed || s.Approval == "rejected" {
			continue
		}
		mine[s.Name] = true
		// Plugin servers belong to their plugin's config: wrap cannot
		// rewrite them.
		if !s.Wrapped && s.Scope != claudecfg.ScopePlugin {
			unprotected = append(unprotected, s.Name)
		}
	}
	recs, err := state.List()
	if err != nil {
		h.Log.Warn("listing shims", "err", err)
	}
	var failing []string
	for _, r := range recs {
		if r.State == state.Failed && mine[r.Server] && !contains(failing, r.Server) {
			failing = append(failing, r.Server)
		}
	}
	var parts []string
	if len(failing) > 0 {
		parts = append(parts, fmt.Sprintf("failing: %s (run /mcp-heal doctor)", names(failing)))
	}
	if len(unprotected) > 0 {
		parts = append(parts, fmt.Sprintf("not protected against crashes and hangs: %s (run /mcp-heal wrap --all)", names(unprotected)))
	}
	if len(parts) == 0 {
		return nil
	}
	return encode(output{SystemMessage: "mcp-heal: MCP servers " + strings.Join(parts, "; ") + "."})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// names lists up to three names and counts the rest.
func names(list []string) string {
	if len(list) <= 3 {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:3], ", "), len(list)-3)
}
