//go:build unix

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// Issue 30, items 2 and 3, through the real Claude Code, side by side with
// Claude Code alone on the same server (testdata/waiting-server.js). The
// shim kills a server only on a fact about the server's own process: a
// stopped child of the server is no stopped server, and time the shim
// itself was stopped is no silence of the server's.

// childCall is how long scenario 13's call waits (s): two of the shim's
// stop checks (750 ms apart) and more.
const childCall = 4

// stoppedChild waits for the server's --stopped-child to be started and
// stopped, and returns its pid.
func (w *waitingServer) stoppedChild(s *session) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if l := w.lines("child "); len(l) > 0 {
			pid, _ := strconv.Atoi(strings.TrimPrefix(l[0], "child "))
			s.trackPID(pid)
			if i, err := procinfo.Get(pid); err == nil && i.Stopped {
				return pid, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the server's child was not started and stopped within 30 s (log: %q)", w.lines(""))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scenarioStoppedChild: the server starts a background child of its own
// and SIGSTOPs it (a job it paused, a build, a debugger); a 4 s call runs,
// then a call reads the state. Alone, the call finishes on the server's
// one process. With mcp-heal the same: the child is not the server (its
// stdout is not the server's), so nothing is killed. The shim before
// issue 30 took any stopped process of the tree for a stopped server and
// killed the server 2 s into the call ("stopped by a signal (SIGSTOP)
// while tools/call was outstanding").
func scenarioStoppedChild(t *testing.T, m mode) outcome {
	var w *waitingServer
	var s *session
	child, stillStopped := 0, false
	s = newModeSession(t, m,
		Turn{
			Before: func() (err error) { child, err = w.stoppedChild(s); return err },
			Tools:  []ToolUse{call("w", "wait", map[string]any{"seconds": childCall})},
		},
		Turn{Tools: []ToolUse{call("w", "state", nil)}},
		Turn{
			// Still stopped after both calls (the server kills it when it
			// exits, at the end of the session).
			Before: func() error { i, err := procinfo.Get(child); stillStopped = err == nil && i.Stopped; return nil },
			Text:   "Done.",
		},
	)
	w = s.addWaiting("w", m.wrap(), "--stopped-child")
	r := s.drive(false, "Wait on the w server, then read its state.", 2)
	o := logCalls(t, s.model, ToolUseID(0, 0))
	waited, after := mustResult(t, s.model, 1, ToolUseID(0, 0)), mustResult(t, s.model, 2, ToolUseID(1, 0))
	starts := w.starts()
	ws, wpid, wok := serverState(waited)
	as, apid, aok := serverState(after)
	if wok && aok && ws == 1 && as == 1 && len(starts) == 1 && wpid == starts[0] && apid == starts[0] {
		o.Note = "same process: state=1 after the call"
	} else {
		o.Note = fmt.Sprintf("server replaced: the call read %q, the next %q; processes %v", truncate(waited.Text, 80), truncate(after.Text, 80), starts)
	}
	t.Logf("%s: %s; child %d still stopped: %v", m, o.Note, child, stillStopped)
	if !strings.HasPrefix(o.Note, "same process") {
		t.Errorf("%s: %s; want the %d s call and the next answered by the one process (state=1), as alone", m, o.Note, childCall)
	}
	if !stillStopped {
		t.Errorf("%s: the server's child %d was no longer stopped after the calls: the scenario did not hold", m, child)
	}
	if m != alone {
		wantKeptByShim(t, s, r)
	}
	return o
}

func TestScenario13StoppedChildKeepsServer(t *testing.T) {
	aloneAndHealed(t, "Claude Code", func(t *testing.T, m mode) { scenarioStoppedChild(t, m) })
}

// Scenario 14's timings: Claude Code cancels the call at frozenTimeout
// (MCP_TOOL_TIMEOUT, which times the next call too); the shim and the
// server (alone: the server) are stopped as the model is asked next,
// just after the cancel, for frozenFor; the server finishes the call
// frozenWait seconds after it began, about 4.5 s after the continue:
// after the shim before issue 30 killed it (the ping of the cancel went
// unanswered across the stop), before a ping sent at the continue times
// out (10 s), and within the next call's time-out. The shim runs with
// --hang-after 5s: the user's limit, whose clocks must not count the
// stopped time either (the first call is cancelled before it runs out:
// 3 s to a ping and 10 s deaf).
const (
	frozenTimeout = 8 * time.Second
	frozenFor     = 15 * time.Second
	frozenWait    = 28
)

// stopTree stops root and every process below it, root first (a shim
// stopped first sees nothing of the rest stopping), as Ctrl-Z of a job or
// a frozen container would, and returns the function that continues them,
// root last.
func stopTree(root int) (cont func(), err error) {
	pids := []int{root}
	for _, p := range descendants(root) {
		pids = append(pids, p.PID)
	}
	var stopped []int
	cont = func() {
		for i := len(stopped) - 1; i >= 0; i-- {
			syscall.Kill(stopped[i], syscall.SIGCONT)
		}
	}
	for _, p := range pids {
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
			cont()
			return nil, fmt.Errorf("SIGSTOP of %d: %w", p, err)
		}
		stopped = append(stopped, p)
	}
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		all := true
		for _, p := range stopped {
			i, err := procinfo.Get(p)
			all = all && err == nil && i.Stopped
		}
		if all {
			return cont, nil
		}
		if time.Now().After(deadline) {
			cont()
			return nil, fmt.Errorf("%v not all seen stopped within 1 s of SIGSTOP", stopped)
		}
	}
}

// scenarioStoppedTogether: a single-threaded server with state waits
// frozenWait s in a call; Claude Code's tool time-out cancels it; then
// the shim and the server are stopped together for frozenFor (alone: the
// server, the same way) and continued; the next call reads the state.
// Alone, the call finishes after the continue and the next reads state=1
// on the same process. With mcp-heal (--hang-after 5s) the same: the
// shim's clocks start again at the continue, nothing is killed. The shim
// before issue 30 counted the stopped seconds as deafness after the
// cancel and killed the server at the continue: the next call read
// state=0 on a new process.
func scenarioStoppedTogether(t *testing.T, m mode) outcome {
	var s *session
	var w *waitingServer
	var stoppedAt time.Time
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("w", "wait", map[string]any{"seconds": frozenWait})}},
		Turn{
			Before: func() error {
				root := 0
				if m.wrap() {
					if pids := s.shimPIDs(); len(pids) == 1 {
						root = pids[0]
					}
				} else if starts := w.starts(); len(starts) == 1 {
					root = starts[0]
				}
				if root == 0 {
					return fmt.Errorf("no single shim or server to stop (shims %v, servers %v)", s.shimPIDs(), w.starts())
				}
				cont, err := stopTree(root)
				if err != nil {
					return err
				}
				stoppedAt = time.Now()
				time.Sleep(frozenFor)
				cont()
				return nil
			},
			Tools: []ToolUse{call("w", "state", nil)},
		},
		Turn{Text: "Done."},
	)
	s.env = append(s.env, fmt.Sprintf("MCP_TOOL_TIMEOUT=%d", frozenTimeout.Milliseconds()))
	var shimFlags []string
	if m.wrap() {
		shimFlags = []string{"--hang-after", "5s"}
	}
	w = s.addWaitingShim("w", m.wrap(), shimFlags)
	r := s.drive(false, "Wait on the w server, then read its state.", 2)
	logCalls(t, s.model, ToolUseID(0, 0))
	o := stateOutcome(measure(firstCalls(s.model, 2), ToolUseID(0, 0)), w, mustResult(t, s.model, 2, ToolUseID(1, 0)))
	first, _ := s.model.AnsweredAt(0)
	t.Logf("%s: stopped %v after the call went out, for %v; %s; server starts %v", m, stoppedAt.Sub(first).Round(time.Millisecond), frozenFor, o.Note, w.starts())
	if tr := mustResult(t, s.model, 1, ToolUseID(0, 0)); !tr.IsError {
		t.Errorf("%s: the waiting call was answered (%q), want Claude Code's time-out", m, tr.Text)
	}
	if !strings.HasPrefix(o.Note, "state kept") {
		t.Errorf("%s: the call after the continue read %s; want state=1 on the same process, as alone", m, o.Note)
	}
	if m != alone {
		wantKeptByShim(t, s, r)
	}
	return o
}

func TestScenario14StoppedWithShimKeepsServer(t *testing.T) {
	aloneAndHealed(t, "Claude Code", func(t *testing.T, m mode) { scenarioStoppedTogether(t, m) })
}

// wantKeptByShim checks a healed run of a stopped-process scenario: the
// hooks ran, and the shim killed no server.
func wantKeptByShim(t *testing.T, s *session, r *run) {
	t.Helper()
	wantHooksRan(t, r, "PreToolUse")
	if kills := s.lifecycle("w", "kill"); len(kills) > 0 {
		t.Errorf("the shim killed a server: %q", kills)
	}
}
