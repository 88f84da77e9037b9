package health

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// The shim's error replies for calls it cannot complete, and its note on
// the first answer after a restart, all in the one shape of cause.go.
// Claude Code shows the errors to the model as "MCP error -32603: <text>";
// Classify recognises them (rules in classify.go), so the hooks can act
// on them.

// stateGone is what a restart costs the model, said once per restart.
// mcp-heal knows that the process's memory (or the remote session) is
// gone, not what the server saved elsewhere: a server that keeps its data
// in a file has it still (issue 32: server-memory's graph was read back
// after a kill). So it says both, in words the model will not turn into
// "your data was wiped".
func stateGone(remote bool) string {
	if remote {
		return "the new session starts fresh: what the server held only for the old session (open pages, sessions) is gone; what it saved may still be there"
	}
	return "the new server process starts fresh: what the old one held only in memory (open pages, sessions) is gone; what it saved (files, a database) may still be there"
}

// restarting is what happens to a server after its run ended.
func restarting(remote bool, done bool) string {
	switch {
	case remote && done:
		return "was reconnected"
	case remote:
		return "is reconnecting"
	case done:
		return "was restarted"
	}
	return "is restarting"
}

// stateLost is stateGone as the restart note says it: short, as the note
// rides on a result the model reads for its own content.
func stateLost(remote bool) string {
	if remote {
		return "what the server held only for the old session is gone; what it saved may still be there"
	}
	return "what the old process held only in memory is gone; what it saved may still be there"
}

// DiscoverIgnored is the -32601 message for a server/discover the server
// left unanswered (it answered later requests) when it died: it is never
// re-sent.
const DiscoverIgnored = "Method not found (the server left server/discover unanswered and answered later requests)"

// DiscoverDied is the -32601 message for a server/discover whose server
// died under it twice: Claude Code then falls back to initialize, as it
// does for a server without server/discover.
const DiscoverDied = "Method not found (the server exited while answering server/discover)"

// RequestVoid is the reason of the notifications/cancelled the shim sends
// the client for a request the dead server had sent it (an elicitation
// still on screen, a roots/list).
const RequestVoid = "the MCP server restarted, so this request is void"

// DiedError is the error for a call whose server ended while it ran: c
// is why, o what became of the call (OutcomeNotResent), page that the
// call was listing a page (its cursor died with the server), advice what
// to do ("" for nothing more; ContinuationAdvice).
func DiedError(server string, c Cause, o Outcome, page bool, advice string) string {
	during := "while this call was running, "
	if page {
		during = "while this page was being listed, "
	}
	return sentence(server, restarting(c.Remote, false), during+c.Clause(), o.sentence(c.Remote), stateGone(c.Remote), advice)
}

// ContinuationAdvice is the advice for a call that continued a multi
// round-trip method (an input-required result's inputResponses or
// requestState) and was not re-sent: the new server may not accept the
// old server's requestState.
func ContinuationAdvice(method string) string {
	return "it continued an input-required " + method + ", so start the call again from the first round"
}

// NotResentWhy is why a call that was running is not sent again: the
// shim's retry rules, in words.
func NotResentWhy(rule string, attempt int, method string) string {
	switch rule {
	case "retries-exhausted":
		return fmt.Sprintf("it was sent %d times and the server ended under it each time", attempt)
	case "cursor-lost":
		return "its pagination cursor ended with the server: list again from the start"
	case "no-retry":
		return "re-sending is turned off for this server"
	case "unknown-tool":
		return "the tool was not in the last tools/list"
	case "unsafe-tool":
		return "the tool is not marked read-only or idempotent"
	case "unsafe-method":
		return method + " is not safe to re-send"
	case "restart":
		return "the restart was asked for while it ran"
	case "ignored":
		return "the server had left it unanswered while it answered later requests"
	}
	return rule
}

// RestartNote is the note on the first answer after a restart: the call
// succeeded (o: re-sent, queued or fresh), but whatever the server held
// is gone. It rides on a result, so it is short (about 170 characters;
// once it was 400, the same words on every restart): what happened, what
// became of this call when that is news, and what was lost. When the
// plugin's monitor told the model already, the shim leaves it out
// (internal/monitor).
func RestartNote(server string, c Cause, o Outcome) string {
	var call string
	switch o.Kind {
	case OutcomeResent:
		call = "this call was re-sent"
	case OutcomeQueued:
		call = "this call waited for it"
	}
	return "mcp-heal: " + sentence(server, restarting(c.Remote, true), c.Clause(), call, stateLost(c.Remote))
}

// DroppedError is the error for a call whose answer mcp-heal dropped: c
// says why (state.CauseOversize, its Detail from OversizeDetail), advice
// what to do (OversizeAdvice); the server keeps running. The relay that
// drops the message (internal/jsonrpc, internal/bridge) produces the
// cause, the shim words it (shim.worded).
func DroppedError(server string, c Cause, advice string) string {
	return sentence(server, "", c.Clause(), Outcome{Kind: OutcomeDropped}.Sentence(), advice)
}

// OversizeDetail is the Detail of an oversize cause: the message's size
// (n < 0: unknown, over the ceiling) and the ceiling, in bytes.
func OversizeDetail(n, limit int64) string {
	if n < 0 {
		return fmt.Sprintf("over the %d-byte ceiling", limit)
	}
	return fmt.Sprintf("%d bytes, over the %d-byte ceiling", n, limit)
}

// OversizeAdvice is what to do about an answer over the ceiling limit:
// raise it, unless it is already what Claude Code takes
// (jsonrpc.DefaultMaxMessage), when a longer line would lose the server.
func OversizeAdvice(limit int64) string {
	if limit >= jsonrpc.DefaultMaxMessage {
		return "raising the ceiling would not help, since Claude Code takes no longer message"
	}
	return "raise the ceiling with mcp-heal shim --max-message"
}

// CrashLoopError is the error for a call to a server in a crash loop: c
// says how it last ended, after how long its last run lasted (<0:
// unknown), stderr its last stderr lines as the server wrote them ("" for
// none; quoted here, text.Said), every the longest
// wait between restarts.
func CrashLoopError(server string, c Cause, after time.Duration, stderr string, every time.Duration) string {
	lasted, last := "", ""
	if after >= 0 {
		lasted = "its last run lasted " + after.String()
	}
	if stderr != "" {
		last = text.Said("its last stderr", stderr)
	}
	return sentence(server, "is failing (crash loop)", c.Clause(), lasted, last,
		fmt.Sprintf("mcp-heal keeps restarting it (at most every %s)", every), Outcome{Kind: OutcomeNotSent}.Sentence())
}

// CannotStartError is the error for a call to a server whose command
// cannot be started at all (why: from StartFailure).
func CannotStartError(server, why string) string {
	return sentence(server, "cannot start", Cause{Kind: "cannot-start", Detail: why}.Clause(), Outcome{Kind: OutcomeNotSent}.Sentence(),
		"fix the command in the MCP config, then run "+Claude.Cmd("heal "+text.Name(server)))
}

// UnreachableError is the error for a call to a remote server (target:
// its URL) that waited in the queue for waited: c is the last failure,
// fails how many connection attempts failed over down (0: it has been
// down or restarting that long).
func UnreachableError(server, target string, c Cause, fails int, down, waited time.Duration) string {
	tried := fmt.Sprintf("%s failed over %s", plural(fails, "connection attempt", "connection attempts"), down)
	if fails == 0 {
		tried = fmt.Sprintf("it has been down or restarting for %s", down)
	}
	return sentence(server, "("+target+") is unreachable", c.Clause(), tried, Outcome{Kind: OutcomeNotSent, Waited: waited}.Sentence())
}

// KillReason is the short reason (logs, status) for a run the shim ended
// for cause (a state.Cause*), detail its words.
func KillReason(cause, detail string) string {
	switch cause {
	case "hang", "stopped":
		return "hung: " + detail
	case "replay":
		return "replay failed: " + detail
	}
	return cause + ": " + detail
}

// StoppedDetail says why the shim killed a server a signal had stopped:
// method was outstanding, process pid of its tree was stopped.
func StoppedDetail(method string, pid int) string {
	return fmt.Sprintf("stopped by a signal (SIGSTOP) while %s was outstanding (process %d)", method, pid)
}

// IdleCheck is why the shim probes a server that has been quiet for a
// while with no call outstanding.
const IdleCheck = "idle health check"

// Outstanding is why the shim probes a server that has left a request
// unanswered: method, outstanding for so long.
func Outstanding(method string, d time.Duration) string {
	return fmt.Sprintf("%s was outstanding for %s with nothing from the server", method, d)
}

// CancelledDetail says why the shim stopped a server after the client
// cancelled a call: the probe (a ping, or server/discover) went unanswered
// for timeout since.
func CancelledDetail(probe string, timeout time.Duration) string {
	return fmt.Sprintf("the client cancelled a call, and no answer to %s came within %s", probe, timeout)
}

// HangDetail says why the shim stopped a server: why it probed
// (Outstanding or IdleCheck), and that the probe (a ping, or
// server/discover in the stateless era) had no answer within timeout.
func HangDetail(why, probe string, timeout time.Duration) string {
	if why == IdleCheck {
		return fmt.Sprintf("no answer to the %s's %s came within %s", IdleCheck, strings.TrimPrefix(probe, "a "), timeout)
	}
	return fmt.Sprintf("%s, and no answer to %s came within %s", why, probe, timeout)
}

// StartFailure says whether err, from starting command, means the command
// can never start as configured (not found, not executable, not a
// program), and says so with the path. Such a server is not crash-looping:
// retrying it cannot help until someone fixes the config. The command is
// looked at too, because an error that crossed a process boundary (a
// guardian started the server) is only text.
func StartFailure(command string, err error) (string, bool) {
	path := command
	if !strings.ContainsRune(command, '/') {
		lp, lerr := exec.LookPath(command)
		if lerr != nil {
			return "command not found: " + command, true
		}
		path = lp
	}
	st, serr := os.Stat(path)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return "command not found: " + path, true
	case serr != nil:
		return "", false
	case st.IsDir():
		return path + " is a directory, not a program", true
	case runtime.GOOS != "windows" && st.Mode()&0o111 == 0:
		return path + " is not executable", true
	case err == nil:
		return "", false
	case errors.Is(err, syscall.ENOEXEC) || strings.Contains(err.Error(), "exec format error"):
		return path + " is not a program (exec format error)", true
	case errors.Is(err, fs.ErrNotExist) && strings.Contains(err.Error(), path):
		// The file is there: what is missing is its #! interpreter.
		return path + ": its interpreter (the #! line) was not found", true
	case errors.Is(err, os.ErrPermission):
		return path + " is not executable", true
	}
	return "", false
}

func quote(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return text.QuotedName(name)
}

// StateGoneError is the error for a round of a multi round-trip method
// whose requestState a server process that ended minted, when the new
// process refused it (answer: what it said): the earlier rounds are gone
// with that process.
func StateGoneError(server string, c Cause, method, answer string) string {
	gone := "this " + method + " continued rounds that ran in the process that ended, and the new server process did not take their state"
	gone += paren(text.Said("it", answer))
	return sentence(server, restarting(c.Remote, true), c.Clause(), gone,
		"start the call again from the first round if its work is still needed")
}

// TaskGoneError is the error for a request of the tasks extension
// (io.modelcontextprotocol/tasks: tasks/get, tasks/update, tasks/cancel)
// that names a task created by a server process that has ended, and that
// the new process answered with an error: the task ran in the process
// that ended, and no answer about it will ever come. c is why the process
// ended, task the task's id as the server gave it, answer the new
// process's own error message (quoted).
func TaskGoneError(server string, c Cause, task, answer string) string {
	gone := "the task " + text.QuotedName(task) + " ran in the process that ended, and the new server process does not have it"
	gone += paren(text.Said("it", answer))
	return sentence(server, restarting(c.Remote, true), c.Clause(), gone,
		"there is nothing to wait for: start the call again if its work is still needed")
}
