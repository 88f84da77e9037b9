package health

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
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
	// mcp-heal shims answer -32603 with the texts of shimerr.go; Claude
	// Code prefixes "MCP error -32603: ".
	{CannotStart, `(?s)MCP server "([^"]+)" cannot start: `, 1, 0},
	{ShimFailed, `(?s)(?:MCP server "([^"]+)" is failing \(crash loop\)|marked failed)`, 1, 0},
	{ShimUnreachable, `(?s)MCP server "([^"]+)" \(.*\) is unreachable: .*was not sent`, 1, 0},
	{ShimRestarted, `(?s)MCP server "([^"]+)" is (?:restarting|reconnecting): .*this call was not re-sent`, 1, 0},
	// The words of shims before the one sentence shape (cause.go).
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

// Classify reports whether text (a PostToolUseFailure error, or a shim's
// error reply) is a disconnect, and which. A tool's own isError text is
// not. Claude Code's "<tool_use_error>" refusals (disconnected, cooldown)
// are classified too, though 2.1.328 shows them only to PostToolBatch,
// which the plugin does not use (docs/plugin-and-hooks.md): the catalogue
// is of Claude Code's strings, wherever they come.
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
