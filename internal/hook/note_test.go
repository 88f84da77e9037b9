//go:build unix

package hook_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// TestPreToolUseRestartNote: a shim whose results since a restart all had
// structuredContent publishes the restart note in its record; the
// PreToolUse hook of the next call to that server gives it to the model as
// context, once, and never when the shim already claimed it.
func TestPreToolUseRestartNote(t *testing.T) {
	const note = `mcp-heal: MCP server "everything" was restarted: ...; whatever the old one held in memory is gone`
	w, payload, rec := preToolUseShim(t)
	rec.Restarts, rec.Note, rec.NoteKey = 1, note, "restart-note-1"
	fakeshim.WriteRecord(t, rec)
	if r := decode(t, w.hook(t, "PreToolUse", payload)); r.HookSpecificOutput.AdditionalContext != note || r.HookSpecificOutput.PermissionDecision != "" {
		t.Fatalf("first call after the note was published: got %+v, want the note as context", r)
	}
	if out := w.hook(t, "PreToolUse", payload); len(out) != 0 {
		t.Fatalf("second call: got %s, want no output (the note was given)", out)
	}

	// A later restart's note the shim gave itself (claimed first).
	rec.NoteKey = "restart-note-2"
	fakeshim.WriteRecord(t, rec)
	if won, err := state.ClaimTold(rec.NoteKey); err != nil || !won {
		t.Fatalf("the shim's claim: %v %v", won, err)
	}
	if out := w.hook(t, "PreToolUse", payload); len(out) != 0 {
		t.Fatalf("note the shim gave: got %s, want no output", out)
	}
}

// TestPreToolUseNotAnswering: before a call to a server whose shim says it
// is not answering (it owes a call and gives no sign of life), the model
// is told, attributed to mcp-heal, with the tool's name quoted.
func TestPreToolUseNotAnswering(t *testing.T) {
	w, payload, rec := preToolUseShim(t)
	rec.NotAnswering = &state.NotAnswering{Since: time.Now().Add(-90 * time.Second), Method: "tools/call", Tool: "long\nrun"}
	fakeshim.WriteRecord(t, rec)
	r := decode(t, w.hook(t, "PreToolUse", payload))
	ctx := r.HookSpecificOutput.AdditionalContext
	if !strings.HasPrefix(ctx, `mcp-heal: MCP server "everything" has not answered for 1m`) ||
		!strings.Contains(ctx, `s: a call of its tool "long\nrun" is still outstanding`) ||
		!strings.Contains(ctx, "/mcp-heal heal everything") || r.HookSpecificOutput.PermissionDecision != "" {
		t.Fatalf("got %+v", r)
	}
	rec.NotAnswering = nil
	fakeshim.WriteRecord(t, rec)
	if out := w.hook(t, "PreToolUse", payload); len(out) != 0 {
		t.Fatalf("once it answers again: got %s, want no output", out)
	}
}

// TestPostToolUseFailureRestartNote (issue 32, item 5): the first answer
// of a restarted server was its own error (a database server while its
// database was down), which cannot carry the restart note; the shim
// published it, and the PostToolUseFailure hook of that very call gives
// it to the model, once. Before, the note came calls later, on the first
// result after the database was back.
func TestPostToolUseFailureRestartNote(t *testing.T) {
	p := sharedPayload(t, "PostToolUseFailure.isError-result.json")
	p["error"] = "MCP error -32603: connect ECONNREFUSED 127.0.0.1:5432"
	payload := marshal(p)
	const note = `mcp-heal: MCP server "tiny" was restarted: ...; what it saved may still be there.`
	w := newWorld(t)
	w.useState(t)
	pid, _ := fakeshim.Start(t)
	rec := state.Record{Server: "tiny", Session: p["session_id"].(string), ClaudePID: os.Getpid(), ShimPID: pid, Mode: state.ModeStdio, State: state.Running, Restarts: 1, Note: note, NoteKey: "restart-note-db"}
	fakeshim.WriteRecord(t, rec)
	r := decode(t, w.hook(t, "PostToolUseFailure", payload))
	if r.HookSpecificOutput.AdditionalContext != note || r.HookSpecificOutput.HookEventName != "PostToolUseFailure" || r.SystemMessage != "" {
		t.Fatalf("the failed first call after the restart: got %+v, want the note as its context", r)
	}
	if out := w.hook(t, "PostToolUseFailure", payload); len(out) != 0 {
		t.Fatalf("the next failed call: got %s, want nothing (the note was given)", out)
	}
}

// preToolUseShim sets up a PreToolUse call to the recorded payload's
// server ("everything", in its session) with a live fake shim for it: the
// world with its state dir, the payload, and the shim's record, Running,
// for the test to add to and write.
func preToolUseShim(t *testing.T) (*world, []byte, state.Record) {
	t.Helper()
	payload := marshal(sharedPayload(t, "PreToolUse.mcp.json"))
	w := newWorld(t)
	w.useState(t)
	pid, _ := fakeshim.Start(t)
	return w, payload, state.Record{Server: "everything", Session: preSession, ClaudePID: os.Getpid(), ShimPID: pid, Mode: state.ModeStdio, State: state.Running}
}
