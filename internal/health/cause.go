package health

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Every error the shim sends for a call, and the note on the first answer
// after a restart, is one sentence of one shape:
//
//	MCP server "<name>"[ <state>]: <cause>[ while this call was running]; <outcome>[; <advice>].
//
// The cause is a whole clause with its own subject ("the server process
// was killed by signal 9 (SIGKILL)"), built from a Cause; the outcome says
// what became of this call (Outcome). Nothing is spliced from another
// component's fragments: the shim, the process layer and the bridge hand
// over values (state.Exit's Cause, Code, SignalNum, Detail, Strays), and
// the words are here.

// Cause is what ended a server's run, or keeps it from running.
type Cause struct {
	Kind      string // a state.Cause* constant; "" falls back on Reason
	Remote    bool   // a remote server (--url): its subject is "the remote server"
	Code      int    // state.CauseExit
	SignalNum int    // state.CauseSignal
	Signal    string // the signal's Go name ("killed"), when its number is unknown
	Detail    string // the cause's own words: what a hung server left unanswered, a remote's error, why a command cannot start
	Strays    int    // processes left outside its process group, stopped with it
	Reason    string // the free-text reason, for exits that carry nothing else
}

// CauseOf is the cause recorded in e, a run of a local (remote false) or
// remote server.
func CauseOf(e state.Exit, remote bool) Cause {
	c := Cause{Kind: e.Cause, Remote: remote, SignalNum: e.SignalNum, Signal: e.Signal, Detail: e.Detail, Strays: e.Strays, Reason: e.Reason}
	if e.Code != nil {
		c.Code = *e.Code
	}
	if c.Kind == "" {
		switch {
		case remote:
			c.Kind, c.Detail = state.CauseRemote, e.Reason
		case e.Code != nil:
			c.Kind = state.CauseExit
		case e.Signal != "" || e.SignalNum != 0:
			c.Kind = state.CauseSignal
		}
	}
	return c
}

// Clause is the cause as a clause with its subject: "the server process
// exited with code 1".
func (c Cause) Clause() string {
	subject := "the server process"
	if c.Remote {
		subject = "the remote server"
	}
	var s string
	switch c.Kind {
	case state.CauseExit:
		s = fmt.Sprintf("%s exited with code %d", subject, c.Code)
	case state.CauseSignal:
		s = subject + " was killed by " + signalName(c.SignalNum, c.Signal)
	case state.CauseHang:
		s = subject + " hung, so mcp-heal stopped it" + paren(c.Detail)
	case state.CauseStopped:
		s = subject + " was " + c.Detail + ", so mcp-heal killed it"
	case state.CauseStdoutClosed:
		s = subject + " closed its stdout, so mcp-heal stopped it"
	case state.CauseCannotStart:
		s = "its command cannot be run" + paren(c.Detail)
	case state.CauseStartFailed:
		if c.Remote {
			s = "the remote server could not be reached" + paren(strings.TrimPrefix(c.Detail, "server unreachable: "))
		} else {
			s = "its last start failed" + paren(c.Detail)
		}
	case state.CauseRemote:
		s = remoteClause(c.Detail)
	case state.CauseOversize:
		s = subject + " sent an answer over mcp-heal's message ceiling" + paren(c.Detail)
	case state.CauseRestart:
		s = "mcp-heal restarted it on purpose" + paren(c.Detail)
	case state.CauseReplay:
		s = subject + " failed the replayed handshake, so mcp-heal stopped it" + paren(c.Detail)
	case state.CauseKept:
		s = subject + " was left running for the next client (--keep)"
	default:
		s = subject + " ended" + paren(c.Reason)
	}
	if c.Strays > 0 && c.Kind != state.CauseKept {
		// Many servers run helpers in their own process group (Playwright
		// runs chromium so): say what was done, blame nobody.
		which := "the process"
		if c.Strays > 1 {
			which = fmt.Sprintf("the %d processes", c.Strays)
		}
		s += fmt.Sprintf(", and %s it had started outside its process group %s stopped with it", which, were(c.Strays))
	}
	return s
}

// remoteClause words the bridge's reasons ("server unreachable: connection
// refused", "session lost: HTTP 404", internal/bridge) as clauses.
func remoteClause(reason string) string {
	kind, detail, ok := strings.Cut(reason, ": ")
	if !ok {
		kind, detail = reason, ""
	}
	switch kind {
	case "server unreachable":
		return "the remote server could not be reached" + paren(detail)
	case "session lost":
		return "the remote server lost the session" + paren(detail)
	case "connection lost":
		return "the connection to the remote server broke" + paren(detail)
	case "server unavailable":
		return "the remote server was unavailable" + paren(detail)
	case "closed by the client":
		return "mcp-heal closed the connection to the remote server"
	}
	return "the connection to the remote server ended" + paren(reason)
}

// signalName is "signal 9 (SIGKILL)"; the numbers named are the same on
// Linux and macOS.
func signalName(n int, goName string) string {
	names := map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}
	switch {
	case names[n] != "":
		return fmt.Sprintf("signal %d (%s)", n, names[n])
	case n != 0 && goName != "" && !strings.HasPrefix(goName, "signal "):
		return fmt.Sprintf("signal %d (%s)", n, goName)
	case n != 0:
		return "signal " + strconv.Itoa(n)
	case goName != "":
		return "a signal (" + goName + ")"
	}
	return "a signal"
}

// Outcome is what became of the call an error or a note is about.
type Outcome struct {
	Kind string // one of the Outcome* constants
	// Why a call was not re-sent (OutcomeNotResent), e.g. "the tool is not
	// marked read-only or idempotent".
	Why string
	// Effect: the call may have taken effect before the server died (a
	// tools/call, not a list).
	Effect bool
	// Waited is how long a call waited before it was answered
	// (OutcomeNotSent after waiting in the queue).
	Waited time.Duration
}

// What became of a call.
const (
	OutcomeResent    = "re-sent"     // it was running when the server died, and was sent again to the new one
	OutcomeQueued    = "queued"      // it arrived while the server was down, waited, and ran on the new one
	OutcomeFresh     = "fresh"       // it arrived after the restart and ran on the new server
	OutcomeNotResent = "not-re-sent" // it was running when the server died, and was answered with an error
	OutcomeNotSent   = "not-sent"    // it never reached a server
	OutcomeDropped   = "dropped"     // it ran, but its answer was dropped (oversize)
)

// Sentence is the outcome as a clause about "this call".
func (o Outcome) Sentence() string { return o.sentence(false) }

func (o Outcome) sentence(remote bool) string {
	fresh := "the new server process"
	if remote {
		fresh = "a new session"
	}
	switch o.Kind {
	case OutcomeResent:
		return "this call was re-sent to " + fresh
	case OutcomeQueued:
		return "this call waited for the restart and ran on " + fresh
	case OutcomeFresh:
		return "this call ran on " + fresh
	case OutcomeNotResent:
		s := "this call was not re-sent" + paren(o.Why)
		if o.Effect {
			s += " and may or may not have taken effect"
		}
		return s
	case OutcomeDropped:
		return "this call ran, but its answer was dropped"
	case OutcomeNotSent:
		if o.Waited > 0 {
			return fmt.Sprintf("this call waited %s and was not sent", o.Waited)
		}
		return "this call was not sent"
	}
	return "this call failed"
}

// sentence is the one shape: `MCP server "x"[ state]: cause; parts....`
func sentence(server, state, cause string, parts ...string) string {
	var b strings.Builder
	b.WriteString("MCP server ")
	b.WriteString(quote(server))
	if state != "" {
		b.WriteString(" " + state)
	}
	b.WriteString(": " + cause)
	for _, p := range parts {
		if p != "" {
			b.WriteString("; " + p)
		}
	}
	b.WriteString(".")
	return b.String()
}

func paren(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return ""
	}
	return " (" + s + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
