//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestMonitorNoStaleNews (issue 32, item 1): a single-threaded server that
// reads nothing while a call runs (testdata/kinds single), in an
// interactive session of Claude Code 2.1.332 with the plugin. A line the
// monitor holds back (one line per server per 20 s) must not reach the
// model once the server answered or was restarted: a model that follows
// it asks the user to restart a server that works.
//   - Answered: the first call (9 s) outlasts the shim's "not answering"
//     rule (--ping-timeout 3s: 6 s of silence) and the monitor tells the
//     model; the second (12 s) is silent
//     again within 20 s of that line, so its line is held back, and then
//     answered. Before the fix the held line reached the model after the
//     answer (it woke the idle session).
//   - Restarted: a third call (60 s) is silent; the user restarts the
//     server (`mcp-heal heal` sends the shim SIGHUP: an instruction), and
//     the next call is answered on the new process. No "not answering"
//     line reaches the model afterwards (the field saw two: 3 of 3 runs).
func TestMonitorNoStaleNews(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code in tmux")
	t.Parallel()
	sleep := func(secs int) ToolUse { return call("busy", "sleep", map[string]any{"seconds": secs}) }
	noted := Turn{Text: "Noted."}
	s := newSession(t,
		Turn{Tools: []ToolUse{sleep(9)}},
		Turn{Tools: []ToolUse{sleep(12)}},
		Turn{Text: "Done."},
		Turn{Tools: []ToolUse{sleep(60)}},
		Turn{Tools: []ToolUse{sleep(1)}},
		Turn{Text: "Done again."},
		noted, noted, noted, noted, noted, noted,
	)
	s.claude = testenv.NPMBin(t, "claude", testenv.ClaudeCode332)
	s.withPlugin()
	server, _ := kindCommand(t, "single")
	// A ping unanswered for 3 s (not 10) makes the server "not
	// answering" 6 s into a call: short calls, wide margins.
	s.addStdio("busy", true, []string{"--ping-timeout", "3s"}, server[0], server[1:]...)
	ts := s.startInteractive(readyPrompt, 2*time.Minute)
	s.waitMonitor(t)
	start := time.Now()
	ts.typeLine("Sleep twice.")
	if s.waitNotAnswering(t, time.Time{}, time.Minute).IsZero() {
		t.Fatalf("the shim never recorded the first silence\n%s", ts)
	}
	if !s.model.WaitTurn(1, time.Minute) {
		t.Fatalf("the first call was never answered\n%s", ts)
	}
	second := time.Now()
	if s.waitNotAnswering(t, second, 30*time.Second).IsZero() {
		t.Fatalf("the shim never recorded the second silence\n%s", ts)
	}
	heldAt := time.Now()
	if !s.model.WaitTurn(2, time.Minute) {
		t.Fatalf("the second call was never answered\n%s", ts)
	}
	answered := s.model.ForTurn(2)
	t.Logf("first silence told; second silence recorded %s after the session started, answered %s later",
		heldAt.Sub(start).Round(time.Millisecond), answered.At.Sub(heldAt).Round(time.Millisecond))
	ts.waitScreen(readyPrompt, 30*time.Second)
	// Past the monitor's 20 s between two lines about one server, idle: a
	// line it prints now wakes the model.
	time.Sleep(30 * time.Second)
	told := monitorLines(answered)
	if !strings.Contains(strings.Join(told, "\n"), "not answer") {
		t.Errorf("the model was never told the server was not answering during the first call")
	}
	main := s.model.Main()
	late := monitorLines(main[len(main)-1])[len(told):]
	t.Logf("answered: monitor lines by the answer: %q; since: %q", told, late)
	for _, l := range late {
		if strings.Contains(l, "not answer") {
			t.Fatalf("after the server answered, a stale line reached the model: %q", l)
		}
	}

	ts.typeLine("Sleep again.")
	if s.waitNotAnswering(t, time.Now(), time.Minute).IsZero() {
		t.Fatalf("the shim never recorded the third silence\n%s", ts)
	}
	healed := time.Now()
	rec := s.shimRecord(t)
	if err := syscall.Kill(rec.ShimPID, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !s.model.WaitTurn(5, 3*time.Minute) {
		t.Fatalf("the call after the restart never ended\n%s", ts)
	}
	after := s.model.ForTurn(5)
	if tr := mustResult(t, s.model, 5, ToolUseID(4, 0)); tr.IsError || !strings.Contains(tr.Text, "slept") || sleptPID(tr.Text) == rec.ChildPID {
		t.Fatalf("the call after the restart: %q (old pid %d), want it answered by a new process", tr.Text, rec.ChildPID)
	}
	t.Logf("restarted: the call after the restart was answered %s after the SIGHUP", after.At.Sub(healed).Round(time.Millisecond))
	ts.waitScreen(readyPrompt, 30*time.Second)
	time.Sleep(30 * time.Second)
	told = monitorLines(after)
	main = s.model.Main()
	late = monitorLines(main[len(main)-1])[len(told):]
	t.Logf("restarted: monitor lines by the answer: %q; since: %q", told, late)
	for _, l := range late {
		if strings.Contains(l, "not answer") {
			t.Errorf("after the new process answered, a stale line reached the model: %q", l)
		}
	}
	ts.quit()
}

// shimRecord is the session's one shim record.
func (s *session) shimRecord(t *testing.T) (r struct {
	ShimPID  int `json:"shim_pid"`
	ChildPID int `json:"child_pid"`
}) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.stateDir(), "mcp-heal", "shims", "*.json"))
	if len(files) != 1 {
		t.Fatalf("shim records: %q, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil || r.ShimPID <= 0 {
		t.Fatalf("shim record %s: %v", b, err)
	}
	return r
}

// waitNotAnswering waits until a shim record of the session says its
// server is not answering, in a silence that began after from; it returns
// when that silence began (zero if none came within timeout).
func (s *session) waitNotAnswering(t *testing.T, from time.Time, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(s.stateDir(), "mcp-heal", "shims", "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var r struct {
				NotAnswering *struct {
					Since time.Time `json:"since"`
				} `json:"not_answering"`
			}
			if json.Unmarshal(b, &r) == nil && r.NotAnswering != nil && r.NotAnswering.Since.After(from) {
				return r.NotAnswering.Since
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return time.Time{}
}

// TestMonitorShimKilled (issue 32, item 4): the shim of a wrapped server
// is killed with SIGKILL while an interactive session of Claude Code
// 2.1.332 is idle. Claude Code loses the server with it; mcp-heal said
// nothing, and the next call got "No such tool available". Now the
// monitor finds the shim's record left behind and tells the model (and
// the user) at once, what to run first.
func TestMonitorShimKilled(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code in tmux")
	t.Parallel()
	noted := Turn{Text: "Noted."}
	s := newSession(t,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
		Turn{Text: "Done."},
		noted, noted, noted,
	)
	s.claude = testenv.NPMBin(t, "claude", testenv.ClaudeCode332)
	s.withPlugin()
	s.userScope = true // where status finds it
	s.addExample("ex", true, nil)
	ts := s.startInteractive(readyPrompt, 2*time.Minute)
	ts.ask("Echo before.", 1, "the first call never ended")
	s.waitMonitor(t)
	shim, err := waitProc(s.claudePID(), isShim, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := syscall.Kill(shim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	woke := s.model.WaitRequest(hasMonitorLine, time.Minute)
	if woke == nil {
		t.Fatalf("no line of the monitor reached the model within a minute of the shim's kill\n%s", ts)
	}
	lines := monitorLines(woke)
	t.Logf("the line reached the model %s after the kill: %q", woke.At.Sub(killed).Round(time.Millisecond), lines)
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "mcp-heal: run /mcp reconnect ex: its shim exited at ") && !strings.HasPrefix(lines[0], "mcp-heal: run /mcp reconnect ex: its shim exited between ") || !strings.Contains(lines[0], "(killed or crashed)") {
		t.Errorf("want one line, what to run first")
	}
	if ts.waitScreen("run /mcp reconnect ex: its shim exited", 30*time.Second) {
		t.Logf("what the user sees:\n%s", ts.capture())
	} else {
		t.Errorf("the user was not shown the line\n%s", ts)
	}
	out, err := s.mcpHeal("status")
	t.Logf("status:\n%s", out)
	if err != nil || !strings.Contains(string(out), "ex: run /mcp reconnect ex in Claude Code: its shim exited ") {
		t.Errorf("status does not name the shim's death: %v", err)
	}
	ts.quit()
}
