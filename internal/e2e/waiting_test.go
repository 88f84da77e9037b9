//go:build unix

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// Issue 30, item 1, through the real Claude Code: a single-threaded server
// with state (testdata/waiting-server.js) whose call waits on I/O reads
// nothing meanwhile, pings included. Claude Code cancels the call (its
// tool time-out in `-p`, the user's Esc interactive). Alone, the call
// finishes in the background and the next call reads state=1 on the same
// process. Nothing tells waiting from hung, so with mcp-heal the server is
// left running too and the model is told once, with the command that
// restarts it; when the model (scripted) runs `mcp-heal heal w` from the
// Bash tool, the next call answers on a new process.

// waitingServer is the waiting server's log (--log): its starts and calls.
type waitingServer struct {
	t   *testing.T
	log string
}

// addWaiting configures testdata/waiting-server.js as server name, with
// flags, wrapped when wrap.
func (s *session) addWaiting(name string, wrap bool, flags ...string) *waitingServer {
	return s.addWaitingShim(name, wrap, nil, flags...)
}

// addWaitingShim is addWaiting with the shim's flags shimFlags.
func (s *session) addWaitingShim(name string, wrap bool, shimFlags []string, flags ...string) *waitingServer {
	w := &waitingServer{t: s.t, log: dataFile(s, name+"-server.log")}
	s.addNodeScript(name, wrap, shimFlags, "waiting-server.js", append([]string{"--log", w.log}, flags...)...)
	return w
}

// lines are the log's lines starting with word.
func (w *waitingServer) lines(word string) []string {
	b, _ := os.ReadFile(w.log)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, word) {
			out = append(out, l)
		}
	}
	return out
}

// starts are the pids of the processes started so far.
func (w *waitingServer) starts() []int {
	var out []int
	for _, l := range w.lines("start ") {
		n, _ := strconv.Atoi(strings.TrimPrefix(l, "start "))
		out = append(out, n)
	}
	return out
}

var stateRE = regexp.MustCompile(`^state=([0-9]+) pid=([0-9]+)`)

// serverState reads "state=N pid=P" out of a result; ok false when it is
// not one.
func serverState(tr ToolResult) (state, pid int, ok bool) {
	m := stateRE.FindStringSubmatch(tr.Text)
	if m == nil || tr.IsError {
		return 0, 0, false
	}
	state, _ = strconv.Atoi(m[1])
	pid, _ = strconv.Atoi(m[2])
	return state, pid, true
}

// firstCalls are the first n scripted calls (fewer when fewer were made).
func firstCalls(m *Model, n int) []Call {
	c := m.Calls()
	return c[:min(n, len(c))]
}

func bash(command, description string) ToolUse {
	return ToolUse{Name: "Bash", Input: map[string]any{"command": command, "description": description}}
}

// cancelNotice is in what mcp-heal tells the model of a server that has
// answered nothing since its call was cancelled (issue 30): "... since a
// call of its tool "wait" was cancelled 12s ago".
const cancelNotice = "was cancelled"

// heldText is all the text the model holds in r: every block of every
// message, tool results included.
func heldText(r *Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		for _, bl := range m.Content {
			b.WriteString(bl.Text)
			b.WriteString(textOf(bl.Content))
			b.WriteString("\n")
		}
	}
	return b.String()
}

// stateOutcome adds what the call after the cancel read to o (the
// cancelled call and that one; the report leaves the heal out): state kept
// (state=1 on the first process) or lost.
func stateOutcome(o outcome, w *waitingServer, after ToolResult) outcome {
	state, pid, ok := serverState(after)
	starts := w.starts()
	if ok && state == 1 && len(starts) > 0 && pid == starts[0] {
		o.Note = "state kept: state=1 on the same process"
		return o
	}
	o.Failed++ // whatever the call said, the server forgot what it did
	o.Note = fmt.Sprintf("state lost: %q, processes %v", truncate(after.Text, 80), starts)
	return o
}

// The -p timings: Claude Code cancels the call at cancelTimeout, the
// server finishes it at cancelWait; the next call goes out at cancelNext
// after the first (the model "thinks" until then): after the shim before
// issue 30 killed the server (10 s after the cancel), before the server's
// answer, and close enough to it for that call to end within Claude
// Code's time-out.
const (
	cancelTimeout = 15 * time.Second
	cancelWait    = 36
	cancelNext    = 28 * time.Second
)

// stuck is a call the server never finishes in a test's time: the one
// `mcp-heal heal` is for.
var stuck = call("w", "wait", map[string]any{"seconds": 3600})

// waitCancelQuiet waits until the shim of server records it not
// answering since its call was cancelled.
func (s *session) waitCancelQuiet(server string) error {
	return s.waitShim(server, time.Minute, func(r *state.Record) bool { q := r.Quiet(); return q != nil && q.Cancelled })
}

// scenarioCancelledWait is the `-p` side: Claude Code's tool time-out
// cancels the waiting call; the next call reads the state. With mcp-heal,
// a second call is cancelled the same way, this one for good, and once
// the shim says the server is not answering the model runs `mcp-heal heal
// w` in the Bash tool and reads the state again.
func scenarioCancelledWait(t *testing.T, m mode) outcome {
	var s *session
	first := func() time.Time { at, _ := s.model.AnsweredAt(0); return at }
	script := []Turn{
		{Tools: []ToolUse{call("w", "wait", map[string]any{"seconds": cancelWait})}},
		{
			Before: func() error {
				time.Sleep(time.Until(first().Add(cancelNext)))
				if m.wrap() {
					return s.waitCancelQuiet("w") // what the hook reads
				}
				return nil
			},
			Tools: []ToolUse{call("w", "state", nil)},
		},
	}
	if m.plugin() {
		script = append(script,
			Turn{Tools: []ToolUse{stuck}},
			Turn{
				Before: func() error { return s.waitCancelQuiet("w") },
				Tools:  []ToolUse{bash("mcp-heal heal w", "Restart the w server")},
			},
			Turn{Tools: []ToolUse{call("w", "state", nil)}})
	}
	script = append(script, Turn{Text: "Done."})
	s = newModeSession(t, m, script...)
	s.userScope = true // where `mcp-heal heal` finds it
	s.allow = []string{"Bash(mcp-heal:*)"}
	s.env = append(s.env, fmt.Sprintf("MCP_TOOL_TIMEOUT=%d", cancelTimeout.Milliseconds()))
	w := s.addWaiting("w", m.wrap())
	r := s.drive(false, "Wait on the w server, then read its state.", len(script)-1)
	logCalls(t, s.model, ToolUseID(0, 0))
	o := stateOutcome(measure(firstCalls(s.model, 2), ToolUseID(0, 0)), w, mustResult(t, s.model, 2, ToolUseID(1, 0)))
	t.Logf("%s: %s; server starts %v", m, o.Note, w.starts())
	if tr := mustResult(t, s.model, 1, ToolUseID(0, 0)); !tr.IsError {
		t.Errorf("%s: the waiting call was answered (%q), want Claude Code's time-out", m, tr.Text)
	}
	if !strings.HasPrefix(o.Note, "state kept") {
		t.Errorf("%s: the call after the cancel read %s; want state=1 on the same process", m, o.Note)
	}
	if m == alone {
		return o
	}
	wantHooksRan(t, r, "PreToolUse")
	// Told once, by the PreToolUse hook of the call after the cancel (no
	// monitor runs in -p); the calls after it are told nothing (the heal's
	// own output in the Bash tool says it too).
	told := 0
	for _, ctxs := range allHookContexts(s.model) {
		for _, c := range ctxs {
			told += strings.Count(c, cancelNotice)
		}
	}
	if told != 1 {
		t.Errorf("the hooks told the model %d times that w is not answering since its call was cancelled, want once: %v", told, allHookContexts(s.model))
	}
	if ctx := s.model.ForTurn(2).HookContext()["PreToolUse:mcp__w__state"]; !strings.Contains(ctx, cancelNotice) || !strings.Contains(ctx, "mcp-heal heal w") {
		t.Errorf("the call after the cancel: PreToolUse context %q, want that w is not answering since its call was cancelled and `mcp-heal heal w`", ctx)
	}
	wantHealed(t, s, w, 3)
	return o
}

// allHookContexts are the hook contexts of every main request, by turn.
func allHookContexts(m *Model) map[int]map[string]string {
	out := map[int]map[string]string{}
	for _, r := range m.Main() {
		if c := r.HookContext(); len(c) > 0 {
			out[r.Turn] = c
		}
	}
	return out
}

// wantHealed checks the scripted `mcp-heal heal w` ran in the Bash tool
// (its result in turn healTurn+1) and the next call answered on a new
// process; no server process was killed before it.
func wantHealed(t *testing.T, s *session, w *waitingServer, healTurn int) {
	t.Helper()
	heal := mustResult(t, s.model, healTurn+1, ToolUseID(healTurn, 0))
	t.Logf("`mcp-heal heal w` in the Bash tool: is_error=%v %q", heal.IsError, truncate(heal.Text, 600))
	after := mustResult(t, s.model, healTurn+2, ToolUseID(healTurn+1, 0))
	state, pid, ok := serverState(after)
	starts := w.starts() // `heal` may start a process of its own to probe the command
	if heal.IsError || !ok || state != 0 || len(starts) < 2 || pid == starts[0] || !slices.Contains(starts, pid) {
		t.Errorf("after `mcp-heal heal w` the call read %q (processes %v); want state=0 on a new process", after.Text, starts)
	}
	if len(starts) > 0 && procinfo.Alive(starts[0]) {
		t.Errorf("the first server process %d still runs after `mcp-heal heal w`", starts[0])
	}
	if ctx := s.model.ForTurn(healTurn + 2).HookContext()["PreToolUse:mcp__w__state"]; strings.Contains(ctx, cancelNotice) {
		t.Errorf("the call after `mcp-heal heal w` was still told the server is not answering: %q", ctx)
	}
	healed, _ := s.model.AnsweredAt(healTurn)
	for _, k := range s.lifecycleTimes("w", "kill") {
		if k.Before(healed) {
			t.Errorf("a server process was killed before `mcp-heal heal w` (kill events: %q)", s.lifecycle("w", "kill"))
		}
	}
}

func TestScenario10CancelledWaitKeepsServer(t *testing.T) {
	aloneAndHealed(t, "Claude Code", func(t *testing.T, m mode) { scenarioCancelledWait(t, m) })
}

// The interactive timings: the user presses Esc escDelay into a call that
// waits escWait seconds, and asks again escNext after the Esc (or once the
// monitor's line was answered, when later): after the shim before issue
// 30 killed the server (10 s after the cancel), before the server's
// answer.
const (
	escWait  = 50
	escDelay = 2 * time.Second
	escNext  = 14 * time.Second
)

// escape presses Esc escDelay into the call of tool, once it reached the
// server; with the plugin, it waits for the monitor's line to wake the
// model (turn woken is its answer) and returns the lines it brought.
func escape(t *testing.T, s *session, ts *tmuxSession, w *waitingServer, calls int, m mode, woken int) (esc time.Time, lines []string) {
	t.Helper()
	testenv.WaitFor(t, time.Minute, "the call to reach the server", func() bool { return len(w.lines("call wait ")) >= calls })
	time.Sleep(escDelay)
	held := 0 // monitor lines the model holds already
	if main := s.model.Main(); len(main) > 0 {
		held = len(monitorLines(main[len(main)-1]))
	}
	esc = time.Now()
	ts.keys("Escape")
	if !m.plugin() {
		return esc, nil
	}
	woke := s.model.WaitRequest(func(r *Request) bool { return r.Turn == woken && len(monitorLines(r)) > held }, escNext+30*time.Second)
	if woke == nil {
		t.Errorf("no line of the monitor reached the model after the Esc\n%s", ts)
		ts.ask("Anything new?", woken, "the model was never asked after \"Anything new?\"") // keep the script in step
		return esc, nil
	}
	lines = monitorLines(woke)[held:]
	t.Logf("the monitor's line reached the model %v after the Esc: %q", woke.At.Sub(esc).Round(time.Millisecond), lines)
	if !s.model.WaitTurn(woken, time.Minute) {
		t.Fatalf("the model woken by the monitor was never answered\n%s", ts)
	}
	ts.waitScreen(readyPrompt, 30*time.Second)
	return esc, lines
}

// scenarioCancelledEsc is the interactive side: the user's Esc cancels
// the waiting call; the next call reads the state. With mcp-heal a second
// call is cancelled for good, and the model, told by the monitor, runs
// `mcp-heal heal w` and reads the state again.
func scenarioCancelledEsc(t *testing.T, m mode) outcome {
	script := []Turn{{Tools: []ToolUse{call("w", "wait", map[string]any{"seconds": escWait})}}}
	if m.plugin() {
		script = append(script, Turn{Text: "Noted."}) // woken by the monitor's line
	}
	next := len(script)
	script = append(script, Turn{Tools: []ToolUse{call("w", "state", nil)}}, Turn{Text: "Done."})
	if m.plugin() {
		script = append(script,
			Turn{Tools: []ToolUse{stuck}},
			Turn{Text: "Noted again."}, // woken by the monitor's line
			Turn{Tools: []ToolUse{bash("mcp-heal heal w", "Restart the w server")}},
			Turn{Tools: []ToolUse{call("w", "state", nil)}},
			Turn{Text: "Restarted."})
	}
	s := newModeSession(t, m, script...)
	s.userScope = true
	s.allow = []string{"Bash(mcp-heal:*)"}
	w := s.addWaiting("w", m.wrap())
	ts := s.startInteractive(readyPrompt, time.Minute)
	ts.typeLine("Wait on the w server.")
	esc, first := escape(t, s, ts, w, 1, m, 1)
	time.Sleep(time.Until(esc.Add(escNext)))
	ts.ask("Read the state of w.", next+1, "the state call after the Esc never ended")
	logCalls(t, s.model, ToolUseID(0, 0))
	o := stateOutcome(measure(firstCalls(s.model, 2), ToolUseID(0, 0)), w, mustResult(t, s.model, next+1, ToolUseID(next, 0)))
	t.Logf("%s: %s; server starts %v", m, o.Note, w.starts())
	if !strings.HasPrefix(o.Note, "state kept") {
		t.Errorf("%s: the call after the Esc read %s; want state=1 on the same process", m, o.Note)
	}
	if m == alone {
		ts.quit()
		return o
	}
	ts.typeLine("Wait on w again.")
	_, second := escape(t, s, ts, w, 2, m, next+3)
	ts.ask("Restart w and read its state.", len(script)-1, "the heal and the call after it never ended")
	shown := ts.capture()
	ts.quit()
	logCalls(t, s.model, ToolUseID(0, 0))
	// Told once per cancel, by the monitor, with the command.
	for i, lines := range [][]string{first, second} {
		if len(lines) != 1 || !strings.Contains(lines[0], cancelNotice) || !strings.Contains(lines[0], "mcp-heal heal w") {
			t.Errorf("cancel %d: monitor lines %q, want one saying w is not answering since its call was cancelled, with `mcp-heal heal w`", i+1, lines)
		}
	}
	if lines := monitorLines(s.model.ForTurn(len(script) - 1)); len(lines) != 2 {
		t.Errorf("the model holds %d monitor lines at the end, want 2 (one per cancel): %q", len(lines), lines)
	}
	t.Logf("the screen at the end:\n%s", shown)
	wantHealed(t, s, w, next+4)
	return o
}

func TestScenario10CancelledByEscKeepsServer(t *testing.T) {
	aloneAndHealed(t, "Claude Code in tmux", func(t *testing.T, m mode) { scenarioCancelledEsc(t, m) })
}
