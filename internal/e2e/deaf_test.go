//go:build unix

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestScenario4Deaf is the hang the SIGSTOP row does not cover: the server
// keeps running (state S, not T) but reads nothing and answers nothing,
// pings included, with a read-only call outstanding. Silence alone is no
// proof (docs/shim.md, rule 6), nor is a cancelled call (issue 30: a
// server waiting on I/O is deaf just the same), so the shim here runs
// with --kill-on-cancel, the user's consent to the rescue: at its tool
// time-out (MCP_TOOL_TIMEOUT) Claude Code cancels the call
// (notifications/cancelled), the server stays deaf to the shim's ping for
// 10 s, and the shim restarts it. The model sees the timed-out call fail,
// as it would alone, and the next call succeed on the new server; alone,
// that next call times out too (the server stays hung for the session).
func TestScenario4Deaf(t *testing.T) {
	t.Parallel()
	scenarioDeaf(t, healed)
}

// deafTimeout is Claude Code's tool time-out in the deaf scenario.
const deafTimeout = 15 * time.Second

func scenarioDeaf(t *testing.T, m mode) outcome {
	var s *session
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
		Turn{
			// The example server hangs on the next call that arrives
			// while this file exists, and removes it: the server started
			// in its place works.
			Before: func() error { return os.WriteFile(dataFile(s, "hang"), nil, 0o600) },
			Tools:  []ToolUse{call("ex", "echo", map[string]any{"text": "while deaf"})},
		},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after"})}},
		Turn{Text: "Done."},
	)
	s.env = append(s.env, fmt.Sprintf("MCP_TOOL_TIMEOUT=%d", deafTimeout.Milliseconds()))
	s.addExample("ex", m.wrap(), []string{"--kill-on-cancel"}, "--hang-file", dataFile(s, "hang"))
	r := s.drive(false, "Echo through the ex server.", 3)
	calls := s.model.Calls()
	o := logCalls(t, s.model, ToolUseID(1, 0))
	if _, err := os.Stat(dataFile(s, "hang")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the hang file is still there (%v): the server never went deaf", err)
	}
	if m == alone {
		return o
	}
	if tr := mustResult(t, s.model, 2, ToolUseID(1, 0)); !tr.IsError {
		t.Errorf("the call to the deaf server: the model saw %q, want Claude Code's time-out", tr.Text)
	}
	wantOK(t, "the next call", mustResult(t, s.model, 3, ToolUseID(2, 0)), "after")
	// Cancelled at the time-out, deaf to the ping for 10 s, restarted,
	// the next call re-sent: within about 11 s of it.
	t.Logf("the call to the deaf server took %v, the next one %v", calls[1].Duration(), calls[2].Duration())
	if d := calls[2].Duration(); d > 20*time.Second {
		t.Errorf("the next call took %v, want the deaf server restarted about 10 s after the cancel", d)
	}
	if kills := s.lifecycle("ex", "kill"); len(kills) != 1 || !strings.Contains(kills[0], "the client cancelled a call, and no answer to") {
		t.Errorf("want one kill, for a cancelled call the server stayed deaf after; kill events: %q", kills)
	}
	wantHooksRan(t, r, "PreToolUse")
	return o
}

// lifecycle returns the lines of server's lifecycle log with event event.
func (s *session) lifecycle(server, event string) []string {
	b, _ := os.ReadFile(filepath.Join(s.stateDir(), "mcp-heal", "logs", server+".log"))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"event":"`+event+`"`) {
			out = append(out, l)
		}
	}
	return out
}

// lifecycleTimes returns the times of server's lifecycle events event.
func (s *session) lifecycleTimes(server, event string) []time.Time {
	var out []time.Time
	for _, l := range s.lifecycle(server, event) {
		var e struct {
			Time time.Time `json:"time"`
		}
		if json.Unmarshal([]byte(l), &e) == nil {
			out = append(out, e.Time)
		}
	}
	return out
}

// TestDeafServerRestartedAfterEsc: the same deaf server (the shim run with
// --kill-on-cancel) in an interactive session, where the user presses Esc
// during the call instead of waiting for a time-out. Claude Code then cancels the call; the server stays deaf
// to the shim's probe and is restarted about 10 s later, and the next
// prompt's call is answered. Claude Code alone leaves the server hung for
// the rest of the session.
func TestDeafServerRestartedAfterEsc(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code in tmux")
	t.Parallel()
	var s *session
	s = newModeSession(t, healed,
		Turn{
			Before: func() error { return os.WriteFile(dataFile(s, "hang"), nil, 0o600) },
			Tools:  []ToolUse{call("ex", "echo", map[string]any{"text": "while deaf"})},
		},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after"})}},
		Turn{Text: "Done."},
	)
	s.addExample("ex", true, []string{"--kill-on-cancel"}, "--hang-file", dataFile(s, "hang"))
	ts := s.startInteractive(readyPrompt, 2*time.Minute)
	ts.typeLine("Echo through the ex server.")
	if !s.model.WaitTurn(0, 3*time.Minute) {
		t.Fatalf("the model was never asked for the first turn\n%s", ts)
	}
	// Let the call reach the deaf server, then interrupt it.
	deadline := time.Now().Add(time.Minute)
	for _, err := os.Stat(dataFile(s, "hang")); err == nil; _, err = os.Stat(dataFile(s, "hang")) {
		if time.Now().After(deadline) {
			t.Fatalf("the call never reached the server\n%s", ts)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	esc := time.Now()
	ts.keys("Escape")
	for len(s.lifecycle("ex", "kill")) == 0 {
		if time.Since(esc) > time.Minute {
			t.Fatalf("the deaf server was not restarted within a minute of the Esc (no kill event)\n%s", ts)
		}
		time.Sleep(200 * time.Millisecond)
	}
	kills := s.lifecycleTimes("ex", "kill")
	t.Logf("killed %v after the Esc", kills[0].Sub(esc).Round(time.Millisecond))
	if k := s.lifecycle("ex", "kill"); !strings.Contains(k[0], "the client cancelled a call, and no answer to") {
		t.Errorf("kill: %s", k[0])
	}
	ts.waitScreen(readyPrompt, 30*time.Second)
	ts.typeLine("Echo again.")
	if !s.model.WaitTurn(2, 3*time.Minute) {
		t.Fatalf("the model was never asked for the last turn\n%s", ts)
	}
	wantOK(t, "the call after the Esc", mustResult(t, s.model, 2, ToolUseID(1, 0)), "after")
	ts.quit()
}
