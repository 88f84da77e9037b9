//go:build unix

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// claudeLineLimit is the longest line (without its "\n") Claude Code
// takes from a stdio server, measured with 2.1.328 and 2.1.332 (see
// docs/claude-code-behaviour.md): one byte more and it closes the
// connection ("Connection closed") and starts the server again for the
// next call.
const claudeLineLimit = 16<<20 - 1

// lineLimitRun runs one `claude -p` session against bigline-server.js:
// the model calls echo, then big (an answer line of size bytes), then echo
// again. It returns what the model saw for each.
func lineLimitRun(t *testing.T, claude string, size int, wrap bool) (before, big, after ToolResult) {
	t.Helper()
	s := newSession(t,
		Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "before"})}},
		Turn{Tools: []ToolUse{call("bl", "big", map[string]any{"bytes": size})}},
		Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "after"})}},
		Turn{Text: "Done."},
	)
	s.claude = claude
	s.addNodeScript("bl", wrap, nil, "bigline-server.js")
	s.drive(false, "Call echo, big, then echo.", 3)
	return mustResult(t, s.model, 1, ToolUseID(0, 0)), mustResult(t, s.model, 2, ToolUseID(1, 0)), mustResult(t, s.model, 3, ToolUseID(2, 0))
}

// serverPID is the pid bigline-server.js's echo reports.
func serverPID(tr ToolResult) string {
	_, pid, _ := strings.Cut(tr.Text, " pid ")
	return pid
}

// TestClaudeCodeLineLimit: Claude Code alone takes a line of
// claudeLineLimit bytes from a stdio server and drops the connection on
// one byte more (the call fails with "Connection closed" and the next call
// runs on a new server process); through the shim with its default
// ceiling, the longer answer fails that one call with message-too-large
// and the server process stays. Both pinned releases.
func TestClaudeCodeLineLimit(t *testing.T) {
	t.Parallel()
	if jsonrpc.DefaultMaxMessage > claudeLineLimit {
		t.Fatalf("the shim's default ceiling %d is over what Claude Code takes (%d)", jsonrpc.DefaultMaxMessage, claudeLineLimit)
	}
	for _, pkg := range []string{testenv.ClaudeCode, testenv.ClaudeCode332} {
		claude := testenv.NPMBin(t, "claude", pkg)
		version := strings.TrimPrefix(pkg, "@anthropic-ai/claude-code@")
		t.Run(version+" alone", func(t *testing.T) {
			for _, size := range []int{claudeLineLimit, claudeLineLimit + 1} {
				before, big, after := lineLimitRun(t, claude, size, false)
				t.Logf("line of %d bytes: is_error=%v %q; echo pids %s, %s", size, big.IsError, truncate(big.Text, 120), serverPID(before), serverPID(after))
				closed := big.IsError && strings.Contains(big.Text, "Connection closed")
				if want := size > claudeLineLimit; closed != want {
					t.Errorf("line of %d bytes: the model saw is_error=%v %q, want connection closed: %v", size, big.IsError, truncate(big.Text, 200), want)
				}
			}
		})
		t.Run(version+" through the shim", func(t *testing.T) {
			before, big, after := lineLimitRun(t, claude, claudeLineLimit+1, true)
			t.Logf("line of %d bytes through the shim: is_error=%v %q; echo pids %s, %s", claudeLineLimit+1, big.IsError, truncate(big.Text, 300), serverPID(before), serverPID(after))
			if !big.IsError || !strings.Contains(big.Text, "message ceiling") {
				t.Errorf("a line of %d bytes through the shim: the model saw is_error=%v %q, want the shim's message-too-large error", claudeLineLimit+1, big.IsError, truncate(big.Text, 300))
			}
			if p := serverPID(before); p == "" || p != serverPID(after) || after.IsError {
				t.Errorf("echo before and after the big answer: %q and %q, want the same server process answering both", before.Text, after.Text)
			}
		})
	}
}

// TestClaudeCodeLineLimitProbe is the experiment behind claudeLineLimit:
// MCP_HEAL_LINE_SIZES (comma-separated byte counts) through Claude Code
// alone (the release MCP_HEAL_CLAUDE_CODE picks, default the pin), logged.
func TestClaudeCodeLineLimitProbe(t *testing.T) {
	sizes := os.Getenv("MCP_HEAL_LINE_SIZES")
	if sizes == "" {
		t.Skip("set MCP_HEAL_LINE_SIZES to probe")
	}
	claude := testenv.NPMBin(t, "claude", claudeCodePackage(t))
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			before, big, after := lineLimitRun(t, claude, n, false)
			t.Logf("line of %d bytes: big is_error=%v %q; echo before %q, after %q", n, big.IsError, truncate(big.Text, 300), before.Text, after.Text)
		})
	}
}

// A cut answer: cutAt bytes of a cutSize answer line (issue 30).
const (
	cutSize = 8 << 20
	cutAt   = 4_000_000
)

// TestClaudeCodeCutLine measures what Claude Code (2.1.328 and 2.1.332)
// does with a cut line from a stdio server that stays up: the server
// writes the first `broken` bytes of an answer line, ends the line there
// (as a relay does with an answer it cut: at the ceiling, or when the
// server behind it died), then answers the same call with an error. Claude
// Code skips the line it cannot parse and keeps the connection: the model
// sees the error answer, and the next call runs on the same process
// (docs/claude-code-behaviour.md, "A cut line").
func TestClaudeCodeCutLine(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	t.Parallel()
	for _, pkg := range []string{testenv.ClaudeCode, testenv.ClaudeCode332} {
		claude := testenv.NPMBin(t, "claude", pkg)
		version := strings.TrimPrefix(pkg, "@anthropic-ai/claude-code@")
		for _, broken := range []int{1000, cutAt} {
			t.Run(fmt.Sprintf("%s/cut after %d bytes", version, broken), func(t *testing.T) {
				t.Parallel()
				s := newSession(t,
					Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "before"})}},
					Turn{Tools: []ToolUse{call("bl", "big", map[string]any{"bytes": cutSize, "broken": broken})}},
					Turn{Tools: []ToolUse{call("bl", "echo", map[string]any{"text": "after"})}},
					Turn{Text: "Done."},
				)
				s.claude = claude
				s.addNodeScript("bl", false, nil, "bigline-server.js")
				s.drive(false, "Call echo, big, then echo.", 3)
				before, big, after := mustResult(t, s.model, 1, ToolUseID(0, 0)), mustResult(t, s.model, 2, ToolUseID(1, 0)), mustResult(t, s.model, 3, ToolUseID(2, 0))
				t.Logf("%s, a line cut after %d bytes, then an error answer: the model saw is_error=%v %q; echo pids %s then %s (%q)", version, broken, big.IsError, truncate(big.Text, 300), serverPID(before), serverPID(after), truncate(after.Text, 200))
				if !big.IsError || !strings.Contains(big.Text, "the answer was cut after") {
					t.Errorf("the call with the cut line: the model saw is_error=%v %q; want the error answer that followed the cut line (the line skipped)", big.IsError, truncate(big.Text, 300))
				}
				if p := serverPID(before); p == "" || p != serverPID(after) || after.IsError {
					t.Errorf("echo before and after the cut line: %q and %q; want the same process (the connection kept)", before.Text, after.Text)
				}
			})
		}
	}
}
