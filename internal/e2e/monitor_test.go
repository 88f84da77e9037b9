//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// monitorEvent is how Claude Code hands the model a line of the plugin's
// monitor: a task notification whose summary is the monitor's
// description (monitors/monitors.json), in a system block after a tool
// result, or in a user block of its own that wakes an idle session.
var monitorEvent = regexp.MustCompile(`<summary>Monitor event: "mcp-heal: MCP server changes"</summary>\s*<event>([^<]*)</event>`)

// monitorLines are the monitor's lines the model holds in request r (the
// whole conversation so far).
func monitorLines(r *Request) []string {
	var out []string
	for _, m := range r.Messages {
		for _, b := range m.Content {
			for _, sm := range monitorEvent.FindAllStringSubmatch(b.Text, -1) {
				out = append(out, sm[1])
			}
		}
	}
	return out
}

func hasMonitorLine(r *Request) bool { return len(monitorLines(r)) > 0 }

// isMonitor matches `mcp-heal monitor`, as the plugin's launcher execs it.
func isMonitor(argv []string) bool { return len(argv) >= 2 && argv[len(argv)-1] == "monitor" }

// waitMonitor waits for the session's monitor process.
func (s *session) waitMonitor(t *testing.T) proc {
	t.Helper()
	var p []proc
	testenv.WaitFor(t, time.Minute, "the plugin's monitor (mcp-heal monitor) under Claude Code", func() bool {
		p = findProcs(s.claudePID(), isMonitor)
		return len(p) > 0
	})
	return p[0]
}

// cpuTime is the CPU time pid used so far (utime + stime, Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return time.Duration(u+s) * 10 * time.Millisecond // USER_HZ 100
}

// TestMonitor: the plugin's monitor with the real Claude Code. One
// healthy interactive session stays idle for five minutes and gets no
// line (the monitor using next to no CPU), while beside it, one after the
// other:
//   - interactive, on 2.1.328 and 2.1.332: a wrapped server killed while
//     the session is idle: one line (restarted, state gone) wakes the model
//     before any request of the user's; the next call's result carries no
//     restart note (the monitor claimed it), so the model is told once;
//   - interactive: a crash loop and a server whose command is gone: one
//     line each, with what to run;
//   - `-p`: Claude Code starts no monitor there (2.1.328 and 2.1.332
//     alike), so the restart note stays on the result.
func TestMonitor(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	t.Parallel()
	h := startHealthy(t)
	for _, version := range []string{testenv.ClaudeCode, testenv.ClaudeCode332} {
		t.Run("killed idle/"+version[strings.LastIndex(version, "@")+1:], func(t *testing.T) { monitorKilledIdle(t, version) })
	}
	t.Run("crash loop and give-up", monitorFailures)
	t.Run("print", monitorPrint)
	h.finish(t)
}

func monitorKilledIdle(t *testing.T, version string) {
	s := newSession(t,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
		Turn{Text: "Done."},
		Turn{Text: "Noted."}, // woken by the monitor's line
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after"})}},
		Turn{Text: "Done again."},
	)
	s.claude = testenv.NPMBin(t, "claude", version)
	s.withPlugin()
	s.addExample("ex", true, nil)
	ts := s.startInteractive(readyPrompt, time.Minute)
	ts.ask("Echo before.", 1, "the first call never ended")
	s.waitMonitor(t)
	killed := time.Now()
	if _, err := s.killServer(exampleMatch); err != nil {
		t.Fatal(err)
	}
	woke := s.model.WaitRequest(hasMonitorLine, time.Minute)
	if woke == nil {
		m := s.model.Main()
		t.Logf("last request: %s", truncate(tailText(m[len(m)-1]), 3000))
		t.Fatalf("no line of the monitor reached the model within a minute of the kill\n%s", ts)
	}
	lines := monitorLines(woke)
	t.Logf("%s: the line reached the model %s after the kill, in the request for turn %d: %q", version, woke.At.Sub(killed).Round(time.Millisecond), woke.Turn, lines)
	if woke.Turn != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], `mcp-heal: nothing to run: MCP server "ex" was restarted and answers again: the server process was killed by signal 9 (SIGKILL); what the old process held only in memory is gone; what it saved may still be there.`) {
		t.Errorf("want one line, restarted and state gone, waking the model (turn 2) before any request of the user's")
	}
	if ts.waitScreen("Monitor event: mcp-heal: nothing to run: MCP server", 30*time.Second) {
		t.Logf("what the user sees:\n%s", ts.capture())
	} else {
		t.Errorf("the user was not shown the line\n%s", ts)
	}
	ts.waitScreen(readyPrompt, 30*time.Second)
	ts.typeLine("Echo after.")
	if !s.model.WaitTurn(4, 3*time.Minute) {
		t.Fatalf("the call after the kill never ended\n%s", ts)
	}
	after := mustResult(t, s.model, 4, ToolUseID(3, 0))
	wantOK(t, "the call after the kill", after, "after")
	if strings.Contains(after.Text, "was restarted") {
		t.Errorf("the result after the monitor's line carries the restart note too: %q", after.Text)
	}
	last := s.model.ForTurn(4)
	if n := strings.Count(string(last.Body), "was restarted"); n != 1 || len(monitorLines(last)) != 1 {
		t.Errorf("the model holds the restart %d times and %d monitor lines at the end, want 1 and 1", n, len(monitorLines(last)))
	}
	ts.quit()
}

// monitorFailures: two wrapped servers, killed while the session is
// idle: "loop" fails every start from then on (a crash loop), "gone"
// loses its command (it cannot start). One line each.
func monitorFailures(t *testing.T) {
	s := newSession(t,
		Turn{Tools: []ToolUse{call("loop", "echo", map[string]any{"text": "a"}), call("gone", "echo", map[string]any{"text": "b"})}},
		Turn{Text: "Done."},
		Turn{Text: "Noted."}, Turn{Text: "Noted."}, Turn{Text: "Noted."}, Turn{Text: "Noted."},
	)
	s.withPlugin()
	loop := dataFile(s, "starts")
	if err := os.WriteFile(loop, []byte("1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.addExample("loop", true, nil, "--fail-starts", "1000", "--fail-file", loop)
	cmd := filepath.Join(s.home, "bin", "gone-server")
	os.MkdirAll(filepath.Dir(cmd), 0o755)
	if err := os.Link(testenv.Binary(t), cmd); err != nil {
		t.Fatal(err)
	}
	s.addStdio("gone", true, nil, cmd, "example-server")
	ts := s.startInteractive(readyPrompt, time.Minute)
	ts.ask("Echo through both.", 1, "the first calls never ended")
	s.waitMonitor(t)
	if err := os.WriteFile(loop, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(cmd); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for _, m := range []func([]string) bool{serverMatch("example-server", "--fail-starts"), serverMatch("gone-server")} {
		if _, err := s.killServer(m); err != nil {
			t.Fatal(err)
		}
	}
	both := func(r *Request) bool {
		l := strings.Join(monitorLines(r), "\n")
		return strings.Contains(l, `"loop" is failing (crash loop)`) && strings.Contains(l, `"gone" cannot start`)
	}
	r := s.model.WaitRequest(both, 2*time.Minute)
	if r == nil {
		last := s.model.Main()
		t.Fatalf("the model did not get both lines within two minutes; it holds %q\n%s", monitorLines(last[len(last)-1]), ts)
	}
	t.Logf("both lines reached the model %s after the kills", r.At.Sub(killed).Round(time.Millisecond))
	// The shims keep retrying "loop" in the background: no more lines.
	time.Sleep(30 * time.Second)
	main := s.model.Main()
	lines := monitorLines(main[len(main)-1])
	t.Logf("the monitor's lines: %q", lines)
	if len(lines) != 2 {
		t.Errorf("%d lines, want 2 (one each)", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, "ask the user to run /mcp-heal doctor ") {
			t.Errorf("line %q does not say what to run", l)
		}
	}
	t.Logf("what the user sees:\n%s", ts.capture())
	ts.quit()
}

// monitorPrint: in -p Claude Code starts no monitor, so the restart note
// stays on the first result after a kill.
func monitorPrint(t *testing.T) {
	for _, version := range []string{testenv.ClaudeCode, testenv.ClaudeCode332} {
		var monitors []proc
		var s *session
		s = newSession(t,
			Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "before"})}},
			Turn{Before: func() error {
				monitors = findProcs(s.claudePID(), isMonitor)
				_, err := s.killServer(exampleMatch)
				time.Sleep(2 * time.Second) // the shim restarts it meanwhile
				return err
			}, Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "after"})}},
			Turn{Text: "Done."},
		)
		s.claude = testenv.NPMBin(t, "claude", version)
		s.withPlugin()
		s.addExample("ex", true, nil)
		r := s.runP([]string{"Echo twice."}, 3*time.Minute)
		r.mustOK(t)
		after := mustResult(t, s.model, 2, ToolUseID(1, 0))
		wantOK(t, version+": the call after the kill", after, "after")
		if len(monitors) != 0 || !strings.Contains(after.Text, `MCP server "ex" was restarted`) || hasMonitorLine(s.model.ForTurn(2)) {
			t.Errorf("%s -p: monitors running %v, result %q: want no monitor and the note on the result", version, monitors, after.Text)
		}
	}
}

// healthy is an interactive session left idle for five minutes.
type healthy struct {
	s       *session
	ts      *tmuxSession
	idle    time.Time
	monitor proc
	cpu     time.Duration
}

func startHealthy(t *testing.T) *healthy {
	s := newSession(t,
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "one"})}},
		Turn{Text: "Done."},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "two"})}},
		Turn{Text: "Done again."},
	)
	s.withPlugin()
	s.addExample("ex", true, nil)
	h := &healthy{s: s, ts: s.startInteractive(readyPrompt, time.Minute)}
	h.ts.typeLine("Echo one.")
	if !s.model.WaitTurn(1, 3*time.Minute) {
		t.Fatalf("the first call never ended\n%s", h.ts)
	}
	h.monitor = s.waitMonitor(t)
	h.idle, h.cpu = time.Now(), cpuTime(h.monitor.PID)
	return h
}

// finish waits out the five idle minutes, makes one more call, and checks
// that the model never got a line.
func (h *healthy) finish(t *testing.T) {
	if d := 5*time.Minute - time.Since(h.idle); d > 0 {
		time.Sleep(d)
	}
	cpu := cpuTime(h.monitor.PID) - h.cpu
	idle := time.Since(h.idle)
	h.ts.typeLine("Echo two.")
	if !h.s.model.WaitTurn(3, 3*time.Minute) {
		t.Fatalf("the call after the idle time never ended\n%s", h.ts)
	}
	wantOK(t, "the call after five idle minutes", mustResult(t, h.s.model, 3, ToolUseID(2, 0)), "two")
	var lines []string
	for _, r := range h.s.model.Main() {
		lines = append(lines, monitorLines(r)...)
	}
	t.Logf("healthy session: idle %s; the monitor used %s of CPU meanwhile; %d main requests", idle.Round(time.Second), cpu, len(h.s.model.Main()))
	if len(lines) != 0 || len(h.s.model.Main()) != 4 {
		t.Errorf("a healthy session got monitor lines %q or requests of its own (%d main requests, want 4)", lines, len(h.s.model.Main()))
	}
	if cpu > 2*time.Second {
		t.Errorf("the monitor used %s of CPU in %s idle", cpu, idle)
	}
	h.ts.quit()
}

func tailText(r *Request) string {
	var b strings.Builder
	for _, m := range r.Tail() {
		for _, bl := range m.Content {
			b.WriteString(m.Role + "/" + bl.Type + ": " + bl.Text + string(bl.Content) + " | ")
		}
	}
	return b.String()
}

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
