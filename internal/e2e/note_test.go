//go:build unix

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// restartNote is how the shim's note on the first answer after a restart
// begins (health.RestartNote).
const restartNote = `mcp-heal: MCP server \"every\" was restarted: the server process was killed by signal 9 (SIGKILL)`

// TestRestartNoteReachesModelOnce measures with the real Claude Code what
// the model learns when server-everything (stdio, through the shim) is
// SIGKILLed between calls. Of a result with structuredContent Claude Code
// shows the model only that (measured here: a text item beside it never
// reached the model), so the first answer after the restart, of a tool
// with an outputSchema, comes through untouched and still validates; the
// next answer, plain text, carries the note that the server was restarted
// and its state is gone; no other request the model gets repeats it.
func TestRestartNoteReachesModelOnce(t *testing.T) {
	t.Parallel()
	every := serverMatch("mcp-server-everything")
	var s *session
	s = newSession(t,
		Turn{Tools: []ToolUse{call("every", "echo", map[string]any{"message": "warm"})}},
		Turn{
			Before: func() error { return s.killRestarted(every, 30*time.Second) },
			Tools:  []ToolUse{call("every", "get-structured-content", map[string]any{"location": "Chicago"})},
		},
		Turn{Tools: []ToolUse{call("every", "echo", map[string]any{"message": "again"})}},
		Turn{Tools: []ToolUse{call("every", "echo", map[string]any{"message": "last"})}},
		Turn{Text: "Done."},
	)
	s.addStdio("every", true, nil, testenv.NPMBin(t, "mcp-server-everything", testenv.ServerEverything), "stdio")
	s.drive(false, "Call the every server four times.", 4)

	wantOK(t, "first call", mustResult(t, s.model, 1, ToolUseID(0, 0)), "warm")
	structured := mustResult(t, s.model, 2, ToolUseID(1, 0))
	if structured.IsError || structured.Text != `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}` {
		t.Errorf("structured call after the kill: the model saw is_error=%v %q, want the structured content alone", structured.IsError, structured.Text)
	}
	after := mustResult(t, s.model, 3, ToolUseID(2, 0))
	wantOK(t, "first plain call after the kill", after, "again")
	for _, want := range []string{`MCP server "every" was restarted: the server process was killed by signal 9 (SIGKILL)`, "is gone"} {
		if !strings.Contains(after.Text, want) {
			t.Errorf("the first answer after the restart, as the model saw it, lacks %q:\n%s", want, after.Text)
		}
	}
	wantOK(t, "call after the note", mustResult(t, s.model, 4, ToolUseID(3, 0)), "last")
	// Exactly once in what the model holds at the end: every request body
	// carries the whole conversation so far.
	last := s.model.ForTurn(4)
	if n := strings.Count(string(last.Body), restartNote); n != 1 {
		t.Errorf("the last request holds the note %d times, want 1", n)
	}
	for _, r := range s.model.Main() {
		if r.Turn < 3 && strings.Contains(string(r.Body), restartNote) {
			t.Errorf("turn %d's request holds the note before the restart", r.Turn)
		}
	}
	t.Logf("the model saw: %q", after.Text)
}
