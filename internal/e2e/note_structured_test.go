//go:build unix

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestRestartNoteStructuredOnce: when every answer after the restart has
// structuredContent (as server-filesystem's do), no result can carry the
// restart note, since Claude Code shows the model only structuredContent
// of such a result. The shim publishes the note in its state record, and
// the plugin's PreToolUse hook gives it as context before the next call:
// measured with the real Claude Code, it reaches the model exactly once,
// after the second structured answer, and never before the restart.
func TestRestartNoteStructuredOnce(t *testing.T) {
	t.Parallel()
	every := serverMatch("mcp-server-everything")
	weather := func(city string) Turn {
		return Turn{Tools: []ToolUse{call("every", "get-structured-content", map[string]any{"location": city})}}
	}
	var s *session
	kill := weather("Chicago")
	kill.Before = func() error { return s.killRestarted(every, 30*time.Second) }
	s = newSession(t, weather("New York"), kill, weather("Los Angeles"), weather("Chicago"), Turn{Text: "Done."})
	s.withPlugin()
	s.addStdio("every", true, nil, testenv.NPMBin(t, "mcp-server-everything", testenv.ServerEverything), "stdio")
	s.drive(false, "Ask the every server for the weather four times.", 4)

	for turn := 1; turn <= 4; turn++ {
		r := mustResult(t, s.model, turn, ToolUseID(turn-1, 0))
		if r.IsError || !strings.HasPrefix(r.Text, `{"temperature":`) {
			t.Errorf("call %d: the model saw is_error=%v %q, want the structured content alone", turn, r.IsError, r.Text)
		}
	}
	// Every request body carries the whole conversation so far.
	last := s.model.ForTurn(4)
	if n := strings.Count(string(last.Body), restartNote); n != 1 {
		t.Errorf("the last request holds the note %d times, want 1:\n%s", n, last.Body)
	}
	if third := s.model.ForTurn(3); !strings.Contains(string(third.Body), restartNote) {
		t.Errorf("the request after the second structured answer since the restart lacks the note")
	} else {
		b := string(third.Body)
		i := strings.Index(b, restartNote)
		t.Logf("where the model got it: %s", b[max(0, i-300):i+len(restartNote)])
	}
	for _, r := range s.model.Main() {
		if r.Turn < 3 && strings.Contains(string(r.Body), restartNote) {
			t.Errorf("turn %d's request holds the note before the restart", r.Turn)
		}
	}
	for _, want := range []string{"is gone"} {
		if !strings.Contains(string(last.Body), want) {
			t.Errorf("what the model holds at the end lacks %q", want)
		}
	}
}
