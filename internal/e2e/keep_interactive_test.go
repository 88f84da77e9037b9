//go:build unix

package e2e

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// shimPIDs are the `mcp-heal shim` processes below claude.
func (s *session) shimPIDs() []int {
	var out []int
	for _, p := range descendants(s.claudePID()) {
		if isShim(p.Argv) {
			out = append(out, p.PID)
		}
	}
	return out
}

// TestKeptReconnectInteractive: `/mcp reconnect ex` in an interactive
// session replaces the shim; with --keep the new one re-attaches to the
// same server: same pid, the counter goes on.
func TestKeptReconnectInteractive(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	t.Parallel()
	s := newModeSession(t, healed,
		Turn{Tools: []ToolUse{call("ex", "counter_increment", nil), call("ex", "session_info", nil)}},
		Turn{Text: "Counted."},
		Turn{Tools: []ToolUse{call("ex", "counter_increment", nil), call("ex", "session_info", nil)}},
		Turn{Text: "Counted again."},
	)
	s.addExample("ex", true, []string{"--keep", keepWindow.String()})
	t.Cleanup(func() { stopKept(t, s, "ex") })
	ts := s.startInteractive(readyPrompt, time.Minute)
	ts.ask("Count with ex.", 1, "turn 1 never asked")
	before := s.shimPIDs()
	ts.typeLine("/mcp reconnect ex")
	// The reconnect replaces the shim process.
	deadline := time.Now().Add(30 * time.Second)
	replaced := false
	for time.Now().Before(deadline) && !replaced {
		now := s.shimPIDs()
		replaced = len(now) == 1 && (len(before) == 0 || now[0] != before[0])
		time.Sleep(100 * time.Millisecond)
	}
	if !replaced {
		t.Fatalf("/mcp reconnect ex did not start a new shim (before %v, now %v)\n%s", before, s.shimPIDs(), ts)
	}
	ts.waitScreen(readyPrompt, 30*time.Second)
	ts.typeLine("Count again.")
	if !s.model.WaitTurn(3, 3*time.Minute) {
		t.Fatalf("turn 3 never asked\n%s", ts)
	}
	ts.quit()
	c1, i1 := mustResult(t, s.model, 1, ToolUseID(0, 0)), mustResult(t, s.model, 1, ToolUseID(0, 1))
	c2, i2 := mustResult(t, s.model, 3, ToolUseID(2, 0)), mustResult(t, s.model, 3, ToolUseID(2, 1))
	t.Logf("before /mcp reconnect: counter %s pid %d; after: counter %s pid %d", c1.Text, sessionPID(i1), c2.Text, sessionPID(i2))
	if c1.Text != "1" || c2.Text != "2" || sessionPID(i1) != sessionPID(i2) || sessionPID(i1) == 0 {
		t.Errorf("after /mcp reconnect: counter %q then %q, pid %d then %d; want 1 then 2 on the same process", c1.Text, c2.Text, sessionPID(i1), sessionPID(i2))
	}
}

// TestKeptTwoSessions: two Claude Code sessions at once with the same kept
// server (same HOME, project and config): one attaches, the other gets a
// server of its own; each sees only its own answers.
func TestKeptTwoSessions(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	t.Parallel()
	const n = 4
	script := func(who string) []Turn {
		var turns []Turn
		for i := 0; i < n; i++ {
			turns = append(turns, Turn{Tools: []ToolUse{
				call("ex", "echo", map[string]any{"text": who + strconv.Itoa(i)}),
				call("ex", "slow", map[string]any{"ms": 300}),
			}})
		}
		return append(turns, Turn{Text: "Done."})
	}
	a := newModeSession(t, healed, script("one-")...)
	a.addExample("ex", true, []string{"--keep", keepWindow.String()})
	t.Cleanup(func() { stopKept(t, a, "ex") })
	b := newModeSession(t, healed, script("two-")...)
	// The same HOME, project and server: the same kept identity.
	b.home, b.work, b.servers, b.plugin = a.home, a.work, a.servers, a.plugin
	var wg sync.WaitGroup
	for _, s := range []*session{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.drive(false, "Echo four times.", n)
		}()
	}
	wg.Wait()
	for _, c := range []struct {
		s   *session
		who string
	}{{a, "one-"}, {b, "two-"}} {
		for i := 0; i < n; i++ {
			tr := mustResult(t, c.s.model, i+1, ToolUseID(i, 0))
			if tr.IsError || tr.Text != c.who+strconv.Itoa(i) {
				t.Errorf("session %s call %d saw %q (error %v), want its own %q", c.who, i, tr.Text, tr.IsError, c.who+strconv.Itoa(i))
			}
			if strings.Contains(tr.Text, "one-") && c.who == "two-" || strings.Contains(tr.Text, "two-") && c.who == "one-" {
				t.Errorf("cross-talk: session %s got %q", c.who, tr.Text)
			}
		}
	}
}
