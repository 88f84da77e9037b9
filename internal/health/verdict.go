package health

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Health values `status` shows.
const (
	Healthy  = "ok"
	Failing  = "failed"
	Shadowed = "shadowed"
	Pending  = "pending"
	Disabled = "disabled"
	Unknown  = "unknown"
	Blocked  = "blocked" // Claude Code's policy keeps it from running (ccpolicy)
)

// Verdict is what `status` says about one server.
type Verdict struct {
	Health string // Healthy, Failing, a shim state (restarting, backoff...), ...
	Detail string // one line, or ""
}

// ShimClass is the class of a failed shim record: CannotStart or
// ShimFailed ("" when r is not failed).
func ShimClass(r *state.Record) Class {
	if r == nil || r.State != state.Failed {
		return ""
	}
	if r.Failure == string(CannotStart) {
		return CannotStart
	}
	return ShimFailed
}

// Judge decides a server's health from, in order: shadowing, the latest
// incident the hooks recorded within state.IncidentWindow, its newest shim's own
// state, then what the config says (pending approval, rejected). shim is
// the newest live shim record (or nil), last the newest incident (or nil).
func Judge(s Entry, shim *state.Record, last *state.Incident, now time.Time, a Audience) Verdict {
	in := last
	if !state.IsOpen(in, now) {
		in = nil
	}
	at := func(in *state.Incident) string { return in.Time.Local().Format("15:04:05") }
	switch {
	case s.Shadowed:
		return Verdict{Shadowed, "a higher-precedence scope defines the same name"}
	case s.Policy != nil:
		return Verdict{Blocked, "not run: " + s.Policy.Why}
	case shim == nil && s.Gone != nil:
		// Before the incidents: Claude Code's "Connection closed" of
		// that moment says less than this.
		return Verdict{ShimExited, "run " + a.Reconnect(s.Name) + ": " + ShimGone(s.Gone)}
	case in != nil && NeedsReconnect(in.Class) && in.Session != "":
		// Read from outside the session (a shell): name the one that
		// gave up (status clears the reader's own session).
		return Verdict{Failing, fmt.Sprintf("run %s: %s at %s in session %s; Claude Code will not use it again in that session", a.Reconnect(s.Name), in.Class, at(in), ShortSession(in.Session))}
	case in != nil && NeedsReconnect(in.Class):
		return Verdict{Failing, fmt.Sprintf("run %s: %s at %s; Claude Code will not use it again this session", a.Reconnect(s.Name), in.Class, at(in))}
	case ShimClass(shim) != "":
		what, todo := FailedShim(shim, s.Name, a)
		return Verdict{Failing, todo + ": " + what}
	case in != nil && (shim == nil || shim.Updated.Before(in.Time)):
		d := fmt.Sprintf("%s at %s", in.Class, at(in))
		if in.Action != "" {
			d += " (" + in.Action + ")"
		}
		return Verdict{Failing, d}
	case shim.Quiet() != nil:
		return Verdict{NotAnsweringHealth, NotAnswering(shim, s.Name, now, a)}
	case shim != nil && shim.State == state.Running:
		return Verdict{Healthy, ""}
	case shim != nil && shim.State == state.Idle:
		return Verdict{Healthy, IdleExited}
	case shim != nil:
		return Verdict{shim.State, ""}
	case last != nil && last.Class == string(OK):
		return Verdict{Healthy, ""}
	// What the config says comes after what was seen: a server with
	// incidents was loaded, whatever the approval lists say.
	case s.Approval == ccpolicy.Pending:
		return Verdict{Pending, "not approved yet: Claude Code asks before loading project servers"}
	case s.Approval == ccpolicy.Rejected:
		return Verdict{Disabled, "rejected in this project (disabledMcpjsonServers)"}
	case !s.Wrapped:
		return Verdict{Unknown, "not wrapped: no shim reports on it"}
	}
	// Wrapped, and no shim of it runs (in this session): Claude Code
	// starts a server at session start, so one wrapped since has not
	// been started through mcp-heal yet.
	return Verdict{Unknown, "restart Claude Code, or run " + a.Reconnect(s.Name) + ": no shim running (not started since it was wrapped, or no session runs it)"}
}

// UnprotectedLine is status's last line when n servers run unwrapped:
// what to run first.
func UnprotectedLine(n int, a Audience) string {
	return fmt.Sprintf("Run '%s' (then restart Claude Code): %d server(s) not protected by mcp-heal.", a.Cmd("wrap --all"), n)
}

// ShortSession is the first 8 characters of a session id, as status
// names a session.
func ShortSession(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// FailedShim says what a failed shim record means (what) and what the
// reader must do about it (todo).
func FailedShim(r *state.Record, server string, a Audience) (what, todo string) {
	if ShimClass(r) == CannotStart {
		return "cannot start: " + r.LastError, "fix the command in the MCP config, then run " + a.Cmd("heal "+text.Name(server))
	}
	return "crash loop: " + ExitSummary(r), "fix it (" + a.Cmd("doctor "+text.Name(server)) + "), then run " + a.Cmd("heal "+text.Name(server))
}

// DriftHint is what to do about a local entry that protects a project
// server whose .mcp.json entry changed or went away since wrap copied it
// ("" when it did not).
func DriftHint(s Entry, a Audience) string {
	switch {
	case s.Drift == "":
		return ""
	case strings.HasPrefix(s.Drift, "removed"), strings.HasPrefix(s.Drift, ccpolicy.DriftUnapproved):
		return "run " + a.Cmd("unwrap "+text.Name(s.Name)) + ": " + s.Drift
	}
	return "run " + a.Cmd("wrap "+text.Name(s.Name)) + ": " + s.Drift
}

// IncidentHint is what to do about an incident of class c on server: ""
// unless Claude Code gave up on it for the session.
func IncidentHint(c string, server string, a Audience) string {
	if !NeedsReconnect(c) {
		return ""
	}
	return "run " + a.Reconnect(server)
}

// ExitText says in a few words how a child ended: "exited with code 1",
// "signal killed" ("" for nil).
func ExitText(e *state.Exit) string {
	switch {
	case e == nil:
		return ""
	case e.Reason != "":
		return e.Reason
	case e.Code != nil:
		return "exited with code " + strconv.Itoa(*e.Code)
	case e.Signal != "":
		return "killed by signal " + e.Signal
	}
	return ""
}

// sameWords reports whether b quotes a server's words (text.Quote) that a
// quotes already.
func sameWords(a, b string) bool {
	i := strings.Index(b, "«")
	if i < 0 {
		return false
	}
	j := strings.Index(b[i:], "»")
	if j < 0 {
		return false
	}
	return strings.Contains(a, b[i:i+j+len("»")])
}

// ExitSummary says in a few words how a shim's child last ended: exit
// status, last error, last stderr line, restarts.
func ExitSummary(r *state.Record) string {
	var parts []string
	if t := ExitText(r.LastExit); t != "" {
		parts = append(parts, text.Clip(t, 240))
	}
	// The last error often repeats the exit's reason in other words (a
	// remote's "server unavailable: HTTP 503, the server said: «…»" and
	// "<url> is unavailable: HTTP 503, the server said: «…»"): the
	// server's words are given once.
	if e := r.LastError; e != "" && (len(parts) == 0 || !strings.Contains(parts[0], e) && !sameWords(parts[0], e)) {
		parts = append(parts, text.Clip(e, 240))
	}
	if n := len(r.StderrTail); n > 0 {
		parts = append(parts, text.Said("its stderr", r.StderrTail[n-1]))
	}
	if r.Restarts > 0 {
		parts = append(parts, fmt.Sprintf("%d restarts", r.Restarts))
	}
	if len(parts) == 0 {
		return "no exit status recorded"
	}
	// Each part is clipped, not the whole: the stderr line is quoted
	// whole (text.Said caps it), never cut after its opening «.
	return strings.Join(parts, "; ")
}

// IdleExited is what status says of a server that exited by itself (code
// 0, no call outstanding: state.Idle): healthy, and down until used.
const IdleExited = "exited by itself; starts on the next call"
