//go:build unix

package hook_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// TestPreToolUseNotAnsweringSinceCancel (issue 30): before a call to a
// server that has answered nothing since its call was cancelled, the model
// is told, command first, that this call may wait and how to restart it
// from the Bash tool; the user is told once, with the slash command.
func TestPreToolUseNotAnsweringSinceCancel(t *testing.T) {
	w, payload, rec := preToolUseShim(t)
	rec.NotAnswering = &state.NotAnswering{Since: time.Now().Add(-30 * time.Second), Method: "tools/call", Tool: "fetch", Cancelled: true}
	fakeshim.WriteRecord(t, rec)
	// How long ago depends on when the hook ran.
	ago := regexp.MustCompile(`cancelled \d+s ago`)
	for i := range 2 {
		r := decode(t, w.hook(t, "PreToolUse", payload))
		ctx := ago.ReplaceAllString(r.HookSpecificOutput.AdditionalContext, "cancelled 30s ago")
		r.SystemMessage = ago.ReplaceAllString(r.SystemMessage, "cancelled 30s ago")
		if !strings.HasPrefix(ctx, "mcp-heal: to restart MCP server \"everything\", run `mcp-heal heal everything` with the Bash tool") ||
			!strings.Contains(ctx, `since a call of its tool "fetch" was cancelled 30s ago`) || !strings.Contains(ctx, "a new call to it may wait") ||
			r.HookSpecificOutput.PermissionDecision != "" {
			t.Errorf("call %d: the model's context %q", i+1, ctx)
		}
		want := ""
		if i == 0 {
			want = `mcp-heal: run /mcp-heal heal everything to restart MCP server "everything": it has answered nothing, not even a ping, since a call of its tool "fetch" was cancelled 30s ago; it may still be waiting on something and finish by itself, so mcp-heal leaves it running (a restart loses what it holds in memory)`
		}
		if r.SystemMessage != want {
			t.Errorf("call %d: the user's line %q, want %q", i+1, r.SystemMessage, want)
		}
	}
}

// TestHeadlessToldOnceOfCancelledServer: in `claude -p` no monitor runs, so
// the next PreToolUse hook (a call to another server) tells the model, once,
// of a server not answering since its call was cancelled; an interactive
// session leaves that to the monitor.
func TestHeadlessToldOnceOfCancelledServer(t *testing.T) {
	payload := marshal(sharedPayload(t, "PreToolUse.mcp.json"))
	w := newWorld(t)
	w.useState(t)
	pid, _ := fakeshim.Start(t)
	fakeshim.WriteRecord(t, state.Record{Server: "slow", Session: preSession, ClaudePID: os.Getpid(), ShimPID: pid, Mode: state.ModeStdio, State: state.Running,
		NotAnswering: &state.NotAnswering{Since: time.Now().Add(-20 * time.Second), Method: "tools/call", Tool: "fetch", Cancelled: true}})
	if out := w.hook(t, "PreToolUse", payload); len(out) != 0 {
		t.Fatalf("interactive: got %s, want nothing (the monitor tells the model)", out)
	}
	w.extra = headless
	r := decode(t, w.hook(t, "PreToolUse", payload))
	if c := r.HookSpecificOutput.AdditionalContext; !strings.HasPrefix(c, "mcp-heal: to restart MCP server \"slow\", run `mcp-heal heal slow` with the Bash tool") || r.HookSpecificOutput.PermissionDecision != "" {
		t.Fatalf("headless, first call to another server: %+v", r)
	}
	if out := w.hook(t, "PreToolUse", payload); len(out) != 0 {
		t.Fatalf("headless, second call: got %s, want nothing (told once)", out)
	}
}
