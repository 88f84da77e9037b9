package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Actions a hook or `heal` records in an incident.
const (
	ActSighup     = "sighup-shim"   // asked a wrapped server's shim to restart its child
	ActKilledHung = "killed-hung"   // stopped a hung unwrapped server
	ActProbedOK   = "probed-ok"     // the server's command or URL works now
	ActProbedFail = "probed-failed" // it does not
	ActDenied     = "denied"        // PreToolUse refused the call
	ActHealthy    = "healthy"       // an ok: a call went out after the incident and did not fail
	ActNone       = "none"
)

// ActionWords says what an action did, for `doctor`.
func ActionWords(a string) string {
	switch a {
	case ActSighup:
		return "restarted it through its shim"
	case ActKilledHung:
		return "stopped the hung process"
	case ActProbedOK:
		return "found its command working"
	case ActProbedFail:
		return "found its command failing"
	case ActDenied:
		return "refused the call before it was sent"
	case ActHealthy:
		return "saw a later call go through"
	}
	return a
}

// Found is what a fresh probe of the server found.
type Found struct {
	Probed bool
	Works  bool
	Why    string // the probe's one-line reason when it does not work
}

// Situation is a failed call as a hook saw it, and what the hook did.
type Situation struct {
	Server  string
	Class   Class
	RetryIn int    // seconds Claude Code waits before its next attempt, when stated
	Shim    string // how the shim's child last ended (ExitSummary), for a failed shim
	Probe   Found
	// Action is what the hook did (ActSighup, ActKilledHung) or "";
	// Stuck says it tried and could not (a signal failed).
	Action string
	Stuck  bool
	// Headless: the session is `claude -p` or the Agent SDK (Headless),
	// where `/mcp reconnect` is refused.
	Headless bool
	// ShimGone says the server's shim died (killed or crashed: ShimGone
	// of its state.Gone), when no shim of it runs since.
	ShimGone string
}

// lostShim reports whether s is a call that failed because the server's
// shim died: Claude Code lost the server with it.
func (s Situation) lostShim() bool {
	return s.ShimGone != "" && !s.Headless && (s.Class == ConnClosed || s.Class == ClosedBeforeAnswer || s.Class.Dead())
}

// pick chooses the advice for what the probe found: works, fails (with
// the probe's reason), or not probed.
func (f Found) pick(works string, fails func(why string) string, unknown string) string {
	switch {
	case !f.Probed:
		return unknown
	case f.Works:
		return works
	}
	return fails(f.Why)
}

// Advice is what the hooks tell the model after a call failed: what
// happened, whether the call may have run, and what to do next. The
// model reads it inside Claude Code, so commands are slash commands.
func Advice(s Situation) string {
	if s.Headless {
		s.Headless = false
		return headlessReconnect(Advice(s), s.Server)
	}
	a := Claude
	q := text.QuotedName(s.Server)
	reconnect := "`" + a.Reconnect(s.Server) + "`"
	doctor := "`" + a.Cmd("doctor "+text.Name(s.Server)) + "`"
	heal := "`" + a.Cmd("heal "+text.Name(s.Server)) + "`"
	p := s.Probe
	msg := func(format string, args ...any) string { return "mcp-heal: " + fmt.Sprintf(format, args...) }

	if s.lostShim() {
		ran := ""
		if classes[s.Class].MayHaveRun {
			ran = "; this call may or may not have taken effect, so check whether it did before retrying"
		}
		return msg("ask the user to run %s: MCP server %s was lost: %s, and Claude Code does not start it again by itself%s. Continue without it until then.", reconnect, q, s.ShimGone, ran)
	}

	switch s.Class {
	case ShimFailed, CannotStart:
		what := fmt.Sprintf("MCP server %s is crash-looping (%s)", q, s.Shim)
		fix := "fix it"
		if s.Class == CannotStart {
			what = fmt.Sprintf("MCP server %s cannot start (%s)", q, s.Shim)
			fix = "fix its command in the MCP config"
		}
		if s.Shim == "" {
			what = strings.TrimSuffix(what, " ()")
		}
		switch {
		case s.Action == ActSighup:
			return msg("%s, but its command works now, so mcp-heal restarted it: retry the call.", what)
		case p.Probed && p.Works:
			return msg("%s; its command works now but mcp-heal could not restart it: ask the user to run %s, then retry.", what, heal)
		case p.Probed:
			return msg("%s and its command still fails now (%s), so calls to it are not sent. Continue without it and ask the user to %s (%s); %s then restarts it at once.", what, p.Why, fix, doctor, heal)
		}
		return msg("%s, so calls to it are not sent. Continue without it and ask the user to %s (%s); %s then restarts it at once.", what, fix, doctor, heal)
	case ShimRestarted:
		return msg("MCP server %s's process died during this call and mcp-heal restarted it; the call was not retried and may or may not have taken effect, so check whether it did before retrying it.", q)
	case IdleTimeout, RequestTimeout:
		switch {
		case s.Action == ActSighup:
			return msg("MCP server %s stopped answering, so mcp-heal restarted it; the call may or may not have taken effect, so check whether it did, then retry it.", q)
		case s.Action == ActKilledHung:
			return msg("MCP server %s was hung, so mcp-heal stopped it and Claude Code starts a fresh one on the next call; this call may or may not have taken effect, so check whether it did, then retry it.", q)
		case s.Stuck:
			return msg("MCP server %s is hung and Claude Code does not replace it; this call may or may not have taken effect. Ask the user to run %s, then check and retry.", q, reconnect)
		}
		return msg("MCP server %s did not answer this call in time and may be hung, so the call may or may not have taken effect: check whether it did. %s", q,
			p.pick(fmt.Sprintf("It answers a fresh connection now; if the next call hangs too, ask the user to run %s.", reconnect),
				func(why string) string {
					return "It does not answer a fresh connection either (" + why + "): continue without it and ask the user to check it (" + doctor + ")."
				},
				fmt.Sprintf("If the next call hangs too, ask the user to run %s.", reconnect)))
	case ClosedBeforeRun:
		return msg("MCP server %s's connection closed before the call ran, so it had no effect: retry it now.", q)
	case StillConnecting:
		return msg("MCP server %s is still starting: wait a few seconds and retry the call.", q)
	case ConnClosed, ClosedBeforeAnswer:
		what := "lost its connection during this call"
		if s.Class == ConnClosed {
			what = "exited during this call"
		}
		return msg("MCP server %s %s, so the call may or may not have taken effect: check whether it did before retrying. %s", q, what,
			p.pick(fmt.Sprintf("Its command works now; if the tool is then unavailable, ask the user to run %s.", reconnect),
				func(why string) string {
					return "Its command now fails (" + why + "): continue without it and ask the user to fix it (" + doctor + ")."
				},
				fmt.Sprintf("If the tool is then unavailable, ask the user to run %s.", reconnect)))
	case NotConnected, Disconnected:
		return p.pick(
			msg("MCP server %s is disconnected and Claude Code will not restart it in this session, but its command works now: ask the user to run %s, then retry.", q, reconnect),
			func(why string) string {
				return msg("MCP server %s is disconnected and cannot start (%s); Claude Code will not retry it in this session. Continue without it and ask the user to fix it (%s), then run %s.", q, why, doctor, reconnect)
			},
			msg("MCP server %s is disconnected and Claude Code will not restart it in this session: continue without it and ask the user to run %s.", q, reconnect))
	case SessionLost:
		return p.pick(
			msg("MCP server %s restarted and dropped Claude Code's session, which Claude Code does not renew by itself; the server answers now: ask the user to run %s, then retry.", q, reconnect),
			func(why string) string {
				return msg("MCP server %s dropped Claude Code's session and does not answer now (%s). Continue without it and ask the user to run %s once it is back.", q, why, reconnect)
			},
			msg("MCP server %s restarted and dropped Claude Code's session, which Claude Code does not renew by itself: ask the user to run %s, then retry.", q, reconnect))
	case Cooldown, GaveUp, Refused:
		when := "within a few seconds"
		if s.RetryIn > 0 {
			when = fmt.Sprintf("in about %d s", s.RetryIn)
		}
		return p.pick(
			msg("MCP server %s was unreachable but answers again now; Claude Code reconnects to it by itself %s: retry then.", q, when),
			func(why string) string {
				return msg("MCP server %s is down (%s); Claude Code keeps retrying it by itself. Continue without it for now and retry later; if it stays down, ask the user to check it (%s).", q, why, doctor)
			},
			msg("MCP server %s is unreachable; Claude Code tries it again by itself %s: retry then, and continue without it if it still fails.", q, when))
	case Reset:
		return p.pick(
			msg("the connection to MCP server %s broke during this call, so it may or may not have taken effect; the server answers again now: check whether a call that changes something already ran, then retry.", q),
			func(why string) string {
				return msg("the connection to MCP server %s broke during this call, so it may or may not have taken effect, and the server does not answer now (%s); Claude Code keeps retrying it by itself. Continue without it for now and retry later.", q, why)
			},
			msg("the connection to MCP server %s broke during this call, so it may or may not have taken effect: check whether a call that changes something already ran, then retry in a few seconds.", q))
	case ShimUnreachable:
		return p.pick(
			msg("MCP server %s was unreachable, so this call was not sent; it answers again now: retry the call.", q),
			func(why string) string {
				return msg("MCP server %s is unreachable (%s), so this call was not sent; mcp-heal keeps reconnecting in the background. Continue without it and retry later; if it stays down, ask the user to check it (%s).", q, why, doctor)
			},
			msg("MCP server %s is unreachable, so this call was not sent; mcp-heal keeps reconnecting in the background: continue without it and retry later.", q))
	}
	return msg("MCP server %s failed (%s): ask the user to run %s.", q, s.Class, doctor)
}

// Deny is PreToolUse's reason for refusing a call to a server whose shim
// is failed (c is ShimFailed or CannotStart): the call would only get the
// shim's error.
func Deny(server string, c Class, shim string) string {
	a := Claude
	what, fix, then := "is crash-looping", "fix it", "restarts it at once"
	if c == CannotStart {
		what, fix, then = "cannot start", "fix its command in the MCP config", "then starts it"
	}
	return fmt.Sprintf("mcp-heal: MCP server %s %s (%s), so this call was not sent; mcp-heal keeps trying it in the background. Continue without this server and ask the user to %s (`%s`); `%s` %s.",
		text.QuotedName(server), what, shim, fix, a.Cmd("doctor "+text.Name(server)), a.Cmd("heal "+text.Name(server)), then)
}

// DeadNotice is PreToolUse's warning about a server Claude Code gave up on
// (class c, at t) for this session (headless: `claude -p`, Headless).
func DeadNotice(server string, c Class, t time.Time, headless bool) string {
	if headless {
		return headlessReconnect(DeadNotice(server, c, t, false), server)
	}
	return fmt.Sprintf("mcp-heal: MCP server %s was found disconnected at %s (%s) and Claude Code does not reconnect it by itself; if this call fails, continue without it and ask the user to run `%s`.",
		text.QuotedName(server), t.Local().Format("15:04:05"), c, Claude.Reconnect(server))
}

// SessionNotice is SessionStart's one line for the user about servers
// that are failing or not protected ("" when there is nothing to say).
// unapproved are .mcp.json servers never approved that Claude Code runs
// anyway because the session is headless (`claude -p` starts them; wrap
// leaves them alone until the user approves them).
//
// protected are project servers wrap protects with a local copy, named
// the first time a session starts after wrap: Claude Code's `/mcp` then
// warns "[Conflicting scopes]" about each, which is expected (ConflictNote).
func SessionNotice(failing, unprotected, unapproved, protected []string) string {
	// Each part puts what to run first (the user may see the start of
	// the line only); the parts with something to run come first.
	var parts []string
	if len(failing) > 0 {
		parts = append(parts, fmt.Sprintf("run %s: MCP servers failing: %s", Claude.Cmd("doctor"), names(failing)))
	}
	if len(unprotected) > 0 {
		parts = append(parts, fmt.Sprintf("run %s: MCP servers not protected against crashes and hangs: %s", Claude.Cmd("wrap --all"), names(unprotected)))
	}
	if len(unapproved) > 0 {
		parts = append(parts, fmt.Sprintf("approve them interactively, then run %s: MCP servers never approved in this project, which this headless (-p) session runs anyway, unprotected: %s", Claude.Cmd("wrap --all"), names(unapproved)))
	}
	if len(protected) > 0 {
		lead := "nothing to run: "
		if len(parts) > 0 {
			lead = ""
		}
		parts = append(parts, fmt.Sprintf("%sMCP servers protected by a local copy of their .mcp.json entry: %s (/mcp and 'claude mcp list' warn \"[Conflicting scopes]\" about them: expected, keep both entries)", lead, names(protected)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "mcp-heal: " + strings.Join(parts, "; ") + "."
}

// names lists up to three names (text.Name) and counts the rest.
func names(list []string) string {
	shown := make([]string, 0, 3)
	for _, n := range list[:min(len(list), 3)] {
		shown = append(shown, text.Name(n))
	}
	if len(list) <= 3 {
		return strings.Join(shown, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(shown, ", "), len(list)-3)
}

// BlockedNotice is SessionStart's line about wrapped entries whose real
// server Claude Code's policy denies (a rule written after wrap): the shim
// refuses to start them.
func BlockedNotice(blocked []string) string {
	return fmt.Sprintf("mcp-heal: run %s: MCP servers blocked by Claude Code's policy: %s. Wrapped before its deniedMcpServers rule was written, their shims refuse to start them.", Claude.Cmd("status"), names(blocked))
}
