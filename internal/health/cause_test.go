package health_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// causes is one of each cause the shim reports, local and remote.
var causes = []struct {
	name string
	c    health.Cause
}{
	{"exit code", health.Cause{Kind: state.CauseExit, Code: 1}},
	{"signal", health.Cause{Kind: state.CauseSignal, SignalNum: 9, Signal: "killed"}},
	{"signal unnamed", health.Cause{Kind: state.CauseSignal, SignalNum: 40, Signal: "signal 40"}},
	{"hang", health.Cause{Kind: state.CauseHang, Detail: health.HangDetail(health.Outstanding("tools/call", 20*time.Second), "a ping", 5*time.Second)}},
	{"idle hang", health.Cause{Kind: state.CauseHang, Detail: health.HangDetail(health.IdleCheck, "a ping", 5*time.Second)}},
	{"stdout closed", health.Cause{Kind: state.CauseStdoutClosed}},
	{"stopped by a signal", health.Cause{Kind: state.CauseStopped, Detail: health.StoppedDetail("tools/call", 4242)}},
	{"cannot start", health.Cause{Kind: state.CauseCannotStart, Detail: "command not found: /no/such"}},
	{"start failed", health.Cause{Kind: state.CauseStartFailed, Detail: "fork/exec /x: resource temporarily unavailable"}},
	{"left outside the group", health.Cause{Kind: state.CauseSignal, SignalNum: 9, Strays: 11}},
	{"one left outside the group", health.Cause{Kind: state.CauseExit, Code: 0, Strays: 1}},
	{"remote unreachable", health.CauseOf(state.Exit{Reason: "server unreachable: connection refused"}, true)},
	{"remote session lost", health.CauseOf(state.Exit{Reason: "session lost: HTTP 404"}, true)},
	{"remote connection lost", health.CauseOf(state.Exit{Reason: "connection lost: unexpected EOF"}, true)},
	{"remote start failed", health.Cause{Kind: state.CauseStartFailed, Remote: true, Detail: "server unreachable: connection refused"}},
	{"remote hang", health.Cause{Kind: state.CauseHang, Remote: true, Detail: "no answer to server/discover came within 5s"}},
	{"oversize", health.Cause{Kind: state.CauseOversize, Detail: health.OversizeDetail(314572800, 268435456)}},
	{"remote oversize", health.Cause{Kind: state.CauseOversize, Remote: true, Detail: health.OversizeDetail(-1, 268435456)}},
	{"restart on purpose", health.Cause{Kind: state.CauseRestart, Detail: "/mcp-heal heal"}},
	{"replay failed", health.Cause{Kind: state.CauseReplay, Detail: "initialize: the server answered an error"}},
	{"reason only", health.CauseOf(state.Exit{Reason: "wait failed: no child processes"}, false)},
}

var outcomes = []health.Outcome{
	{Kind: health.OutcomeResent},
	{Kind: health.OutcomeQueued},
	{Kind: health.OutcomeFresh},
	{Kind: health.OutcomeNotResent, Why: health.NotResentWhy("unsafe-tool", 1, "tools/call"), Effect: true},
	{Kind: health.OutcomeNotResent, Why: health.NotResentWhy("retries-exhausted", 3, "tools/call"), Effect: true},
	{Kind: health.OutcomeNotResent, Why: health.NotResentWhy("cursor-lost", 1, "tools/list")},
	{Kind: health.OutcomeNotSent},
	{Kind: health.OutcomeNotSent, Waited: 30 * time.Second},
	{Kind: health.OutcomeDropped},
}

// render is the text the shim sends for cause c and outcome o.
func render(c health.Cause, o health.Outcome) (string, health.Class) {
	switch o.Kind {
	case health.OutcomeResent, health.OutcomeQueued, health.OutcomeFresh:
		return health.RestartNote("srv", c, o), health.OK
	case health.OutcomeNotResent:
		advice := ""
		if strings.Contains(o.Why, "3 times") {
			advice = health.ContinuationAdvice("tools/call")
		}
		return health.DiedError("srv", c, o, strings.Contains(o.Why, "cursor"), advice), health.ShimRestarted
	case health.OutcomeDropped:
		return health.DroppedError("srv", c, health.OversizeAdvice(1<<20)), ""
	}
	if o.Waited > 0 {
		return health.UnreachableError("srv", "https://example.com/mcp", c, 3, 40*time.Second, o.Waited), health.ShimUnreachable
	}
	if c.Kind == state.CauseCannotStart {
		return health.CannotStartError("srv", c.Detail), health.CannotStart
	}
	return health.CrashLoopError("srv", c, 12*time.Millisecond, `"boom"`, 30*time.Second), health.ShimFailed
}

// clauseStart: every clause after the lead begins with a subject of its
// own (or "this call"), so no fragment is spliced into another sentence.
var clauseStart = regexp.MustCompile(`^(?:while this (?:call was running|page was being listed), )?(?:the server process|the remote server|the connection to the remote server|the new server process|the new session|what the old process|what the server|what it saved|its command|its last start|its last run|its last stderr|mcp-heal|this call|a server wrapped|fix the command|raise the ceiling|raising the ceiling|it continued|it has been|its state|\d+ connection attempts?) `)

// TestShimSentences: every cause with every outcome is one whole sentence
// of the one shape: `MCP server "srv"[ state]: cause; ...; outcome.`,
// each part a clause with its own subject, no fragment spliced mid-
// sentence, the words of no other component, and classified back to its
// class with the server's name.
func TestShimSentences(t *testing.T) {
	lead := regexp.MustCompile(`^(?:mcp-heal: )?MCP server "srv"(?: (?:is restarting|was restarted|is reconnecting|was reconnected|is failing \(crash loop\)|cannot start|\(https://example\.com/mcp\) is unreachable))?: `)
	for _, cc := range causes {
		for _, o := range outcomes {
			got, class := render(cc.c, o)
			t.Run(cc.name+"/"+o.Kind, func(t *testing.T) {
				m := lead.FindString(got)
				if m == "" {
					t.Fatalf("%q does not start with the lead", got)
				}
				if !strings.HasSuffix(got, ".") || strings.Count(got, ".") != strings.Count(got, "..")*2+strings.Count(strings.TrimSuffix(got, "."), ".")+1 {
					t.Errorf("%q: not one sentence ending in one period", got)
				}
				for _, bad := range []string{";;", "; ;", " ;", " ,", "..", "  ", "()", "( ", " )", "process server", "it killed", "process killed", "daemonized", "foreground", "it was restarted", "not retried"} {
					if strings.Contains(got, bad) {
						t.Errorf("%q holds %q", got, bad)
					}
				}
				if strings.Count(got, "(") != strings.Count(got, ")") {
					t.Errorf("%q: unbalanced parentheses", got)
				}
				for i, part := range splitClauses(strings.TrimSuffix(got[len(m):], ".")) {
					if !clauseStart.MatchString(part) {
						t.Errorf("clause %d of %q has no subject of its own: %q", i, got, part)
					}
				}
				if class == "" {
					// The server runs on: not a disconnect.
					if _, ok := health.Classify("MCP error -32603: " + got); ok {
						t.Errorf("%q is classified as a disconnect", got)
					}
					return
				}
				if class == health.OK {
					// It rides on a result the model reads for its own
					// content: short (it was 400 characters, the same
					// words on every restart), and what was lost.
					if !strings.Contains(got, "is gone") {
						t.Errorf("restart note %q does not say the state is gone", got)
					}
					// mcp-heal knows the memory is gone, not what the
					// server saved (issue 32: server-memory's graph file
					// outlived the kill).
					if !strings.Contains(got, "only") || !strings.Contains(got, "what it saved may still be there") {
						t.Errorf("restart note %q says more is lost than the process's memory", got)
					}
					if n := len(got) - len(cc.c.Clause()); n > 160 {
						t.Errorf("restart note %q: %d characters besides the cause, want at most 160", got, n)
					}
					if _, ok := health.Classify(got); ok {
						t.Errorf("restart note %q is classified as a failure", got)
					}
					return
				}
				if mt, ok := health.Classify("MCP error -32603: " + got); !ok || mt.Class != class || mt.Server != "srv" {
					t.Errorf("Classify(%q) = %+v, %v; want %s for srv", got, mt, ok, class)
				}
			})
		}
	}
}

// splitClauses splits at "; " outside parentheses.
func splitClauses(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ';':
			if depth == 0 && i+1 < len(s) && s[i+1] == ' ' {
				out = append(out, s[start:i])
				start = i + 2
			}
		}
	}
	return append(out, s[start:])
}

// TestShimSentencesRead pins the sentences of issue 17's reports, read
// whole: Playwright killed with chromium in its own process group, a
// remote server refusing connections, a crash loop ended by signals.
func TestShimSentencesRead(t *testing.T) {
	notResent := health.Outcome{Kind: health.OutcomeNotResent, Why: health.NotResentWhy("unsafe-tool", 1, "tools/call"), Effect: true}
	for _, tt := range []struct{ got, want string }{
		{health.DiedError("playwright", health.CauseOf(state.Exit{Signal: "killed", SignalNum: 9, Cause: state.CauseSignal, Strays: 11}, false), notResent, false, ""),
			`MCP server "playwright" is restarting: while this call was running, the server process was killed by signal 9 (SIGKILL), and the 11 processes it had started outside its process group were stopped with it; this call was not re-sent (the tool is not marked read-only or idempotent) and may or may not have taken effect; the new server process starts fresh: what the old one held only in memory (open pages, sessions) is gone; what it saved (files, a database) may still be there.`},
		{health.DiedError("api", health.CauseOf(state.Exit{Reason: "server unreachable: connection refused"}, true), notResent, false, ""),
			`MCP server "api" is reconnecting: while this call was running, the remote server could not be reached (connection refused); this call was not re-sent (the tool is not marked read-only or idempotent) and may or may not have taken effect; the new session starts fresh: what the server held only for the old session (open pages, sessions) is gone; what it saved may still be there.`},
		{health.CrashLoopError("mem", health.CauseOf(state.Exit{Signal: "killed", SignalNum: 9, Cause: state.CauseSignal}, false), 2*time.Second, "", 30*time.Second),
			`MCP server "mem" is failing (crash loop): the server process was killed by signal 9 (SIGKILL); its last run lasted 2s; mcp-heal keeps restarting it (at most every 30s); this call was not sent.`},
		{health.DroppedError("fs", health.Cause{Kind: state.CauseOversize, Detail: health.OversizeDetail(17000000, jsonrpc.DefaultMaxMessage)}, health.OversizeAdvice(jsonrpc.DefaultMaxMessage)),
			`MCP server "fs": the server process sent an answer over mcp-heal's message ceiling (17000000 bytes, over the 16711680-byte ceiling); this call ran, but its answer was dropped; raising the ceiling would not help, since Claude Code takes no longer message.`},
		{health.TaskGoneError("jobs", health.CauseOf(state.Exit{Signal: "killed", SignalNum: 9, Cause: state.CauseSignal}, false), "786512e2", "unknown task"),
			`MCP server "jobs" was restarted: the server process was killed by signal 9 (SIGKILL); the task "786512e2" ran in the process that ended, and the new server process does not have it (it said: «unknown task»); there is nothing to wait for: start the call again if its work is still needed.`},
		{health.RestartNote("browser", health.Cause{Kind: state.CauseExit, Code: 1}, health.Outcome{Kind: health.OutcomeResent}),
			`mcp-heal: MCP server "browser" was restarted: the server process exited with code 1; this call was re-sent; what the old process held only in memory is gone; what it saved may still be there.`},
	} {
		if tt.got != tt.want {
			t.Errorf("got  %s\nwant %s", tt.got, tt.want)
		}
	}
}

// TestExitSummaryQuotesOnce: a remote's error body, in both the exit's
// reason and the last error, is given once, whole and quoted.
func TestExitSummaryQuotesOnce(t *testing.T) {
	said := text.Said("the server", strings.Repeat("busy ", 30))
	r := &state.Record{LastExit: &state.Exit{Reason: "server unavailable: HTTP 503, " + said}, LastError: "http://h/mcp is unavailable: HTTP 503, " + said, Restarts: 1}
	got := health.ExitSummary(r)
	if strings.Count(got, "«") != 1 || !strings.Contains(got, said) {
		t.Errorf("ExitSummary = %q, want the server's words once, whole: %q", got, said)
	}
}
