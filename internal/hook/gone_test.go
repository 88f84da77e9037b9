//go:build unix

package hook_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// TestShimKilledReported (issue 32, item 4): the shim of "tiny" is killed
// with SIGKILL during a call (its record stays behind). Claude Code gets
// "Connection closed" and, in an interactive session, never starts the
// server again; mcp-heal said nothing of the shim. The PostToolUseFailure
// hook now tells the user, action first, and the model why and what to
// ask for.
func TestShimKilledReported(t *testing.T) {
	p := sharedPayload(t, "PostToolUseFailure.stdio-server-died-mid-call.json")
	w := newWorld(t)
	w.useState(t)
	shim := testenv.StartProcess(t, "sleep", "60")
	fakeshim.WriteRecord(t, state.Record{Server: "tiny", Session: p["session_id"].(string), ClaudePID: os.Getpid(), ShimPID: shim.Process.Pid, Mode: state.ModeStdio, State: state.Running, ChildPID: 1, Started: time.Now()})
	shim.Kill()
	r := decode(t, w.hook(t, "PostToolUseFailure", marshal(p)))
	if !strings.HasPrefix(r.SystemMessage, "mcp-heal: run /mcp reconnect tiny: its shim exited at ") || !strings.Contains(r.SystemMessage, "(killed or crashed)") {
		t.Errorf("the user's line: %q", r.SystemMessage)
	}
	if ctx := r.HookSpecificOutput.AdditionalContext; !strings.HasPrefix(ctx, "mcp-heal: ask the user to run `/mcp reconnect tiny`: MCP server \"tiny\" was lost: its shim exited at ") || !strings.Contains(ctx, "may or may not have taken effect") {
		t.Errorf("the model's context: %q", ctx)
	}
}
