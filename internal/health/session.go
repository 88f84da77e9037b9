package health

import (
	"fmt"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Headless reports whether the hook or command runs for a headless Claude
// Code session (`claude -p`, the Agent SDK), from the environment Claude
// Code gives its hooks and the Bash tool: CLAUDE_CODE_SESSION_ATTENDED is
// "0" and CLAUDE_CODE_ENTRYPOINT "sdk-cli" there, "1" and "cli" in an
// interactive session (measured on 2.1.328 and 2.1.332,
// docs/claude-code-behaviour.md). Nobody can type `/mcp reconnect` in a
// headless session: Claude Code refuses it there ("Reconnect, enable, and
// disable aren't available in this session").
func Headless(getenv func(string) string) bool {
	return getenv("CLAUDE_CODE_SESSION_ATTENDED") == "0" || strings.HasPrefix(getenv("CLAUDE_CODE_ENTRYPOINT"), "sdk")
}

// headlessReconnect rewrites advice that asks for `/mcp reconnect X` into
// what a headless session can do instead: nothing in the session; its next
// run starts the server afresh. The advice is worded once (Advice,
// DeadNotice); this is its one headless form.
func headlessReconnect(advice, server string) string {
	cmd := "`" + Claude.Reconnect(server) + "`"
	instead := "tell the user that this headless (-p) session cannot reconnect it (`/mcp reconnect` works only in an interactive session); the next session starts it afresh"
	r := strings.NewReplacer(
		"ask the user to run "+cmd+", then retry", instead,
		"ask the user to run "+cmd+", then check and retry", instead,
		"Ask the user to run "+cmd+", then check and retry", strings.ToUpper(instead[:1])+instead[1:],
		"ask the user to run "+cmd+" once it is back", instead,
		"ask the user to run "+cmd, instead,
		"then run "+cmd, "then start a new session",
		"if the next call hangs too, ask the user to run "+cmd, "if the next call hangs too, "+instead,
		"this session: run "+Claude.Reconnect(server), "this session, and this headless (-p) session cannot reconnect it: the next session starts it afresh",
		"run "+Claude.Reconnect(server)+": ", "nothing to run (this headless (-p) session cannot reconnect it; the next session starts it afresh): ",
	)
	return r.Replace(advice)
}

// ForHeadless is text for a reader in a headless session (`/mcp-heal
// status` run by `claude -p`): what asks for `/mcp reconnect`, refused
// there, says what happens instead.
func ForHeadless(text, server string) string { return headlessReconnect(text, server) }

// Told kinds: what a hook's one line to the user (systemMessage) was
// about. A session's user gets one line per kind while the server's
// incident stays open (internal/hook), not one per failed call.
const (
	ToldHealed    = "healed"    // mcp-heal restarted or stopped the server
	ToldReconnect = "reconnect" // Claude Code gave up on it for the session
	ToldFailed    = "failed"    // it crash-loops or cannot start: the user must fix it
)

// UserLine is the one line a hook shows the user (systemMessage; the
// model never sees it) when mcp-heal healed a server, gave up on it, or
// needs the user, with its kind; "" and "" when the model's advice is
// enough (a transient failure the model retries). The model's
// explanation (Advice) reaches the model only.
func UserLine(s Situation) (kind, line string) {
	q := text.QuotedName(s.Server)
	doctor := Claude.Cmd("doctor " + text.Name(s.Server))
	switch {
	case s.lostShim():
		return ToldReconnect, fmt.Sprintf("mcp-heal: run %s: %s. Claude Code lost MCP server %s with it.", Claude.Reconnect(s.Server), s.ShimGone, q)
	case s.Action == ActSighup || s.Action == ActKilledHung:
		what := "stopped answering"
		switch s.Class {
		case ShimFailed, CannotStart:
			what = "was failing but its command works now"
		case ConnClosed, ShimRestarted:
			what = "died"
		}
		how := "restarted it"
		if s.Action == ActKilledHung {
			how = "stopped the hung process; Claude Code starts a fresh one on the next call"
		}
		return ToldHealed, fmt.Sprintf("mcp-heal: nothing to run: MCP server %s %s, so mcp-heal %s.", q, what, how)
	case s.Class == ShimFailed || s.Class == CannotStart:
		what := "is crash-looping"
		if s.Class == CannotStart {
			what = "cannot start"
		}
		return ToldFailed, fmt.Sprintf("mcp-heal: run %s: MCP server %s %s; its calls are refused until it is fixed.", doctor, q, what)
	case s.Class.Dead() || s.Stuck:
		what := "is disconnected"
		if s.Stuck {
			what = "is hung"
		}
		if p := s.Probe; p.Probed && !p.Works && !s.Stuck {
			// Its command cannot start (not found, not executable: seen
			// without starting it): `/mcp reconnect` alone would fail
			// again, so the line says where to look first, and why.
			why := text.Clip(p.Why, 160)
			if s.Headless {
				return ToldReconnect, fmt.Sprintf("mcp-heal: run %s: MCP server %s %s and cannot start: %s. The next session starts it, as this headless (-p) session cannot reconnect it.", doctor, q, what, why)
			}
			return ToldReconnect, fmt.Sprintf("mcp-heal: run %s, then %s: %s %s and cannot start: %s.", doctor, Claude.Reconnect(s.Server), q, what, why)
		}
		if s.Headless {
			return ToldReconnect, fmt.Sprintf("mcp-heal: nothing to run: MCP server %s %s; this headless (-p) session cannot reconnect it, and the next session starts it afresh (%s).", q, what, doctor)
		}
		return ToldReconnect, fmt.Sprintf("mcp-heal: run %s: MCP server %s %s; Claude Code will not use it again in this session (if that fails too, %s says why).", Claude.Reconnect(s.Server), q, what, doctor)
	}
	return "", ""
}

// ConflictNote answers Claude Code's "[Conflicting scopes] Server X is
// defined in multiple scopes with different endpoints ... remove the
// others" warning, which `claude mcp list` and `/mcp` print for every
// project server wrap protects with a local entry of the same name (file
// is its .mcp.json). Claude Code warns about any name defined in two
// scopes with different commands, approved or not; no protection that
// keeps the name (and so the tool names) avoids it
// (docs/claude-code-behaviour.md, "Conflicting scopes").
func ConflictNote(file string) string {
	return "protects the entry of the same name in " + file + " with a local copy that runs it through mcp-heal; Claude Code's \"[Conflicting scopes]\" warning about it is expected: keep both entries (removing the project one edits the team's file, removing the local one drops the protection)"
}

// UnprotectedNote is what doctor says of a server Claude Code runs
// directly. Claude Code starts an idle stdio server that died again on
// the next call; what it does not survive is a crash during a call in an
// interactive session, a restart that fails, or a hang
// (docs/claude-code-behaviour.md, "What Claude Code does on its own").
const UnprotectedNote = "not protected: Claude Code runs it directly; it starts it again after a crash between calls, but a crash during a call (interactive sessions) or a failed restart leaves it disconnected for the session, and a hang is never ended"
