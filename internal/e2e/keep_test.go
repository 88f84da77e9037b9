//go:build unix

package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// keepWindow is the --keep window of the kept-server scenarios: long
// enough for a second session to start, short enough to wait out.
const keepWindow = 15 * time.Second

// killDirectChild SIGTERMs the process Claude Code started for the
// server whose command line holds word (the shim when wrapped, the server
// alone): what Claude Code does to its stdio servers in the bug report.
func (s *session) killDirectChild(word string) (proc, error) {
	for _, p := range descendants(s.claudePID()) {
		line := strings.Join(p.Argv, " ")
		if strings.Contains(line, word) && testenv.ParentPID(p.PID) == s.claudePID() {
			if err := syscall.Kill(p.PID, syscall.SIGTERM); err != nil {
				return p, err
			}
			if !testenv.Gone(10*time.Second, p.PID) {
				return p, fmt.Errorf("%v still there 10 s after SIGTERM", p)
			}
			return p, nil
		}
	}
	return proc{}, fmt.Errorf("no child of claude %d runs %q: %v", s.claudePID(), word, descendants(s.claudePID()))
}

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
	cmd := exec.Command(testenv.Binary(t), "stop", name)
	cmd.Env = s.environ()
	out, _ := cmd.CombinedOutput()
	t.Logf("mcp-heal stop %s: %s", name, strings.TrimSpace(string(out)))
}
