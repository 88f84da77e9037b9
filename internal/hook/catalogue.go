package hook

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Class is what kind of disconnect an error string reports.
type Class string

// The catalogue's classes. Each comes from a string Claude Code 2.1.328
// produces (docs/claude-code-behaviour.md, "Error strings") or
// from mcp-heal's own shims.
const (
	ConnClosed         Class = "connection-closed"    // stdio server died during the call
	ClosedBeforeRun    Class = "closed-before-run"    // the call never reached the server
	ClosedBeforeAnswer Class = "closed-before-answer" // the call may have run
	NotConnected       Class = "not-connected"        // stdio respawn failed: never retried
	Disconnected       Class = "disconnected"         // "No such tool ... has disconnected" (interactive)
	Cooldown           Class = "cooldown"             // HTTP server in reconnect cool-down
	GaveUp             Class = "reconnect-gave-up"    // HTTP reconnect attempt failed
	Refused            Class = "connection-refused"   // HTTP server down
	Reset              Class = "connection-reset"     // HTTP connection broke during the call
	SessionLost        Class = "session-lost"         // HTTP server restarted, old session rejected
	IdleTimeout        Class = "idle-timeout"         // hung server: no response or progress
	RequestTimeout     Class = "request-timeout"      // MCP error -32001
	StillConnecting    Class = "still-connecting"     // server not up yet
	ShimRestarted      Class = "shim-restarted"       // mcp-heal shim: child died mid-call, restarted
	ShimFailed         Class = "shim-failed"          // mcp-heal shim: crash loop, call not sent
	ShimUnreachable    Class = "shim-unreachable"     // mcp-heal shim: server down past the deadline, call not sent
	OK                 Class = "ok"                   // recorded by PostToolUse: healthy again
)

// Match is a classified error.
type Match struct {
	Class   Class
	Server  string // the server name when the text names it
	RetryIn int    // seconds Claude Code waits before its next attempt, when stated
}

type rule struct {
	class Class
	re    string
	// groups: index of the server name and of the retry seconds in the
	// submatches (0: none).
	server, retry int
}

// rules are tried in order; the first match wins. Texts that a tool could
// plausibly return as its own isError result ("Connection closed",
// ECONNREFUSED) are anchored to the whole string Claude Code produces, so
// a tool's own failure is not taken for a disconnect.
var rules = []rule{
	// mcp-heal shims answer -32603 (PROTOCOL.md, internal/shim); Claude
	// Code prefixes "MCP error -32603: ".
	{ShimFailed, `(?s)(?:MCP server "([^"]+)" is failing \(crash loop\)|marked failed)`, 1, 0},
	{ShimUnreachable, `(?s)MCP server "([^"]+)" \(.*\) is unreachable: .*was not sent`, 1, 0},
	{ShimRestarted, `(?s)(?:server process|server was restarted).*may or may not have taken effect`, 0, 0},
	{ClosedBeforeAnswer, `MCP server "([^"]+)" connection closed before the tool call was answered`, 1, 0},
	{ClosedBeforeRun, `MCP server "([^"]+)" connection closed before the tool call ran`, 1, 0},
	{Disconnected, `No such tool available: \S+?\.? Its MCP server '([^']+)' has disconnected`, 1, 0},
	{Cooldown, `MCP server "([^"]+)" did not connect when it was last tried, and is not tried again for (\d+) s`, 1, 2},
	{GaveUp, `tried to connect to MCP server "([^"]+)" again and could not\. It can be tried again in (\d+) s`, 1, 2},
	{StillConnecting, `MCP server '([^']+)' is still connecting`, 1, 0},
	{NotConnected, `MCP server "([^"]+)" is not connected`, 1, 0},
	{SessionLost, `MCP server "([^"]+)" session expired`, 1, 0},
	{SessionLost, `^Error POSTing to endpoint.*(?:Session not found|No valid session|[Ss]ession (?:ID )?(?:not found|expired))`, 0, 0},
	{IdleTimeout, `MCP server "([^"]+)" tool "[^"]*" sent no response or progress for`, 1, 0},
	{RequestTimeout, `^MCP error -32001: Request timed out`, 0, 0},
	{Refused, `^ECONNREFUSED: Unable to connect\. Is the computer able to access the url\?$`, 0, 0},
	// Seen in the e2e suite when an HTTP server restarts mid-call.
	{Reset, `^ECONNRESET: The socket connection was closed unexpectedly\.`, 0, 0},
	{ConnClosed, `^(?:MCP error -32000: )?Connection closed\.?$`, 0, 0},
}

// compiled lazily: the PreToolUse healthy path never classifies and must
// not pay for compiling the catalogue.
var compiled = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(rules))
	for i, r := range rules {
		out[i] = regexp.MustCompile(r.re)
	}
	return out
})

// Classify reports whether text (a PostToolUseFailure error or a
// PostToolBatch string response) is a disconnect, and which. A tool's own
// isError text is not.
func Classify(text string) (Match, bool) {
	text = strings.TrimSpace(text)
	if inner, ok := strings.CutPrefix(text, "<tool_use_error>"); ok {
		text = strings.TrimSpace(strings.TrimSuffix(inner, "</tool_use_error>"))
	}
	if text == "" {
		return Match{}, false
	}
	for i, re := range compiled() {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		r := rules[i]
		out := Match{Class: r.class}
		if r.server > 0 {
			out.Server = m[r.server]
		}
		if r.retry > 0 {
			out.RetryIn, _ = strconv.Atoi(m[r.retry])
		}
		return out, true
	}
	return Match{}, false
}

// deadForSession says whether, after c, Claude Code will not use the
// server again in this session unless the user reconnects it.
func deadForSession(c Class) bool {
	switch c {
	case NotConnected, Disconnected, SessionLost:
		return true
	}
	return false
}

// NeedsReconnect says whether an incident of class c leaves the server
// unusable for the rest of the Claude Code session until the user runs
// `/mcp reconnect <name>` (Claude Code never retries it by itself).
func NeedsReconnect(c string) bool { return deadForSession(Class(c)) }
