//go:build unix

package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// keepWindow is the --keep window of the kept-server scenarios: long
// enough for a second session to start, short enough to wait out.
const keepWindow = 15 * time.Second

// sessionPID is the server pid a session_info result reports.
func sessionPID(tr ToolResult) int { return int(gjson.Get(tr.Text, "pid").Int()) }

// Scenario 8: Claude Code SIGTERMs the process it started for a stateful
// server (a counter) between two calls. Alone, the next call starts a new
// server: the state is gone and the call pays the cold start. With
// mcp-heal and --keep, the new shim re-attaches to the same warm server.
func scenarioKeptShimKilled(t *testing.T, m mode) outcome {
	return scenarioKeptShimKilledIn(t, m, nil)
}

// scenarioKeptShimKilledIn runs the scenario and hands got the session and
// the kept server's pid.
func scenarioKeptShimKilledIn(t *testing.T, m mode, got func(*session, int)) outcome {
	const coldStart = 3 * time.Second
	var s *session
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("ex", "counter_increment", nil), call("ex", "session_info", nil)}},
		Turn{
			Before: func() error {
				word := "example-server"
				if m.wrap() {
					word = "shim"
				}
				_, err := s.killDirectChild(word)
				return err
			},
			Tools: []ToolUse{call("ex", "counter_increment", nil), call("ex", "session_info", nil)},
		},
		Turn{Text: "Counted twice."},
	)
	var flags []string
	if m.wrap() {
		flags = []string{"--keep", keepWindow.String()}
	}
	s.addExample("ex", m.wrap(), flags, "--start-delay", coldStart.String())
	if m.wrap() {
		t.Cleanup(func() { stopKept(t, s, "ex") })
	}

	s.drive(false, "Count twice with the ex server.", 2)
	o := logCalls(t, s.model, ToolUseID(1, 0))
	first, second := mustResult(t, s.model, 1, ToolUseID(0, 0)), mustResult(t, s.model, 2, ToolUseID(1, 0))
	pid1, pid2 := sessionPID(mustResult(t, s.model, 1, ToolUseID(0, 1))), sessionPID(mustResult(t, s.model, 2, ToolUseID(1, 1)))
	kept := first.Text == "1" && second.Text == "2" && pid1 == pid2 && pid1 != 0
	if kept {
		o.Note = "state kept: counter 2, same server process"
	} else {
		o.Failed++ // the call worked, but on a server that forgot everything
		o.Note = fmt.Sprintf("state lost: counter %s after %s, server pid %d then %d", second.Text, first.Text, pid1, pid2)
	}
	if m == alone {
		return o
	}
	if !kept {
		t.Errorf("with --keep: counter %q then %q, pid %d then %d; want 1 then 2 on the same process", first.Text, second.Text, pid1, pid2)
	}
	if got != nil {
		got(s, pid1)
	}
	return o
}

// TestScenario8KeptShimKilled: the shim SIGTERMed mid-session re-attaches
// (same pid, same state); a new session within the window finds the same
// server and state; after the window it is gone, guardian and all.
func TestScenario8KeptShimKilled(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	t.Parallel()
	var first *session
	var pid int
	o := scenarioKeptShimKilledIn(t, healed, func(s *session, p int) { first, pid = s, p })
	if t.Failed() || first == nil {
		return
	}
	t.Logf("outcome: %+v", o)
	g := testenv.ParentPID(pid)
	// A new session (claude -p again, same HOME and config) within the
	// window: the same server, the counter goes on.
	first.newConversation(
		Turn{Tools: []ToolUse{call("ex", "counter_increment", nil), call("ex", "session_info", nil)}},
		Turn{Text: "Counted."},
	)
	first.drive(false, "Count once more.", 1)
	c, info := mustResult(t, first.model, 1, ToolUseID(0, 0)), mustResult(t, first.model, 1, ToolUseID(0, 1))
	if c.Text != "3" || sessionPID(info) != pid {
		t.Errorf("new session within the window: counter %q on pid %d, want 3 on the kept %d", c.Text, sessionPID(info), pid)
	}
	// After the window: nothing left.
	if !testenv.Gone(keepWindow+15*time.Second, pid) {
		t.Errorf("the kept server %d still runs after its window", pid)
	}
	if g > 1 && !testenv.Gone(5*time.Second, g) {
		t.Errorf("the kept server's guardian %d still runs after the window", g)
	}
}

// stopKept stops the kept server name of s's HOME (`mcp-heal stop`), so
// that a test leaves nothing behind whatever happened.
func stopKept(t *testing.T, s *session, name string) {
	out, err := s.mcpHeal("stop", name)
	t.Logf("mcp-heal stop %s: %s (%v)", name, strings.TrimSpace(string(out)), err)
}

// TestKeptServerMemory: @modelcontextprotocol/server-memory wrapped with
// --keep; an entity is created, Claude Code's process for the server (the
// shim) is SIGTERMed, and the next call reads the entity from the same
// server process.
func TestKeptServerMemory(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code and an npm server")
	t.Parallel()
	memory := testenv.NPMBin(t, "mcp-server-memory", testenv.ServerMemory)
	var s *session
	var before int
	s = newModeSession(t, healed,
		Turn{Tools: []ToolUse{call("mem", "create_entities", map[string]any{"entities": []map[string]any{
			{"name": "mcp-heal", "entityType": "project", "observations": []string{"kept warm"}}}})}},
		Turn{
			Before: func() error {
				if err := s.waitShim("mem", 10*time.Second, func(r *state.Record) bool { return r.Kept && r.ChildPID > 0 }); err != nil {
					return err
				}
				for _, r := range s.shimRecords() {
					if r.Server == "mem" && r.Attached {
						before = r.ChildPID
					}
				}
				_, err := s.killDirectChild("shim")
				return err
			},
			Tools: []ToolUse{call("mem", "read_graph", nil)},
		},
		Turn{Text: "Read it back."},
	)
	s.env = append(s.env, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
	s.addStdio("mem", true, []string{"--keep", keepWindow.String()}, memory)
	t.Cleanup(func() { stopKept(t, s, "mem") })
	s.drive(false, "Remember mcp-heal, then read it back.", 2)
	logCalls(t, s.model, ToolUseID(1, 0))
	wantOK(t, "read_graph after the shim was SIGTERMed", mustResult(t, s.model, 2, ToolUseID(1, 0)), "kept warm")
	after := 0
	for _, r := range s.shimRecords() {
		if r.Server == "mem" && r.Kept {
			after = r.ChildPID
		}
	}
	t.Logf("server-memory pid before the SIGTERM %d, after %d", before, after)
	if before == 0 || after != before {
		t.Errorf("server-memory pid %d before the shim's SIGTERM, %d after: want the same kept process", before, after)
	}
}

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
