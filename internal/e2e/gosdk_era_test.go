//go:build unix

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// Issue 34 through the real Claude Code: a go-sdk v1.8.0 stdio server
// (testdata/gosdk-server, which answers server/discover and serves the
// 2026-07-28 era) killed between calls and during calls, through the shim
// and alone. The server logs every message it reads, so the test records
// the era Claude Code negotiates with each process.

// goSDKServer builds testdata/gosdk-server once per test process.
func goSDKServer(t *testing.T) string {
	t.Helper()
	testenv.NeedsFull(t, "Claude Code and the go-sdk v1.8.0 server")
	return testenv.Program(t, "./internal/e2e/testdata/gosdk-server")
}

var goSDKMatch = serverMatch("gosdk-server")

// opening is how a client opened one server process: the first method it
// sent and the protocol version that message named.
type opening struct {
	PID     int
	Method  string
	Version string
	Methods []string // every method the process read, in order
}

func (o opening) String() string {
	return fmt.Sprintf("pid %d: %s %s, then %s", o.PID, o.Method, o.Version, strings.Join(o.Methods[min(1, len(o.Methods)):], " "))
}

// openings reads the server's message log: one opening per process, in
// the order the processes first read something.
func openings(t *testing.T, path string) []opening {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the go-sdk server's message log: %v", err)
	}
	defer f.Close()
	var out []opening
	at := map[int]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		pidText, msg, ok := strings.Cut(sc.Text(), " read: ")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil {
			continue
		}
		method := gjson.Get(msg, "method").Str
		if method == "" {
			method = "(response)"
		}
		i, seen := at[pid]
		if !seen {
			version := gjson.Get(msg, `params._meta.io\.modelcontextprotocol/protocolVersion`).Str
			if method == "initialize" {
				version = gjson.Get(msg, "params.protocolVersion").Str
			}
			at[pid], i = len(out), len(out)
			out = append(out, opening{PID: pid, Method: method, Version: version})
		}
		out[i].Methods = append(out[i].Methods, method)
	}
	return out
}

// eraRun is what one mode's session showed: the results the model saw for
// the calls hit by a kill, and how each server process was opened.
type eraRun struct {
	Between, During, After, ReadOnly string // "ok: text" or "error: text"
	Openings                         []opening
}

func seen(tr ToolResult) string {
	if tr.IsError {
		return "error: " + truncate(tr.Text, 300)
	}
	return "ok: " + truncate(tr.Text, 300)
}

// scenarioGoSDKEra: a call, a kill between calls, a counter_increment
// (not idempotent) killed during the call, another, an echo (read-only)
// killed during the call, and a last echo.
func scenarioGoSDKEra(t *testing.T, m mode) eraRun {
	bin := goSDKServer(t)
	var s *session
	var w atomic.Pointer[readWatch]
	watch := func() error {
		rw, _ := watchReads(s.claudePID(), goSDKMatch)
		w.Store(rw)
		return nil
	}
	kill := func() error {
		if rw := w.Load(); rw != nil {
			return rw.killDuringCall()
		}
		return nil
	}
	s = newModeSession(t, m,
		Turn{Tools: []ToolUse{call("gs", "echo", map[string]any{"text": "warm"})}},
		Turn{
			Before: func() error {
				p, err := s.killServer(goSDKMatch)
				if err != nil {
					return err
				}
				if m.wrap() {
					if _, err := waitProc(s.claudePID(), goSDKMatch, 10*time.Second, p.PID); err != nil {
						return fmt.Errorf("the shim did not restart the server: %w", err)
					}
				}
				time.Sleep(time.Second) // the user reads the answer
				return nil
			},
			Tools: []ToolUse{call("gs", "echo", map[string]any{"text": "after the kill"})},
		},
		Turn{Before: watch, Tools: []ToolUse{call("gs", "counter_increment", map[string]any{"delay_ms": 2000})}, After: kill},
		Turn{Tools: []ToolUse{call("gs", "counter_increment", nil)}},
		Turn{Before: watch, Tools: []ToolUse{call("gs", "echo", map[string]any{"text": "read-only", "delay_ms": 2000})}, After: kill},
		Turn{Tools: []ToolUse{call("gs", "echo", map[string]any{"text": "last"})}},
		Turn{Text: "All calls made."},
	)
	log := dataFile(s, "messages.log")
	s.addStdio("gs", m.wrap(), nil, bin, "-log", log, "-counter", dataFile(s, "counter"))
	r := s.drive(false, "Call the gs server's tools.", 6)
	logCalls(t, s.model, ToolUseID(1, 0))
	res := func(turn int) ToolResult { return mustResult(t, s.model, turn+1, ToolUseID(turn, 0)) }
	e := eraRun{
		Between:  seen(res(1)),
		During:   seen(res(2)),
		After:    seen(res(3)),
		ReadOnly: seen(res(4)),
		Openings: openings(t, log),
	}
	for _, o := range e.Openings {
		t.Logf("%s: server %s", m, o)
	}
	t.Logf("%s: killed between calls: %s", m, e.Between)
	t.Logf("%s: counter_increment killed during the call: %s", m, e.During)
	t.Logf("%s: counter_increment after it: %s", m, e.After)
	t.Logf("%s: echo killed during the call: %s; last: %s", m, e.ReadOnly, seen(res(5)))
	if len(e.Openings) < 2 {
		t.Fatalf("%s: %d server processes read anything, want one before and one after the first kill", m, len(e.Openings))
	}
	if m == alone {
		return e
	}
	wantOK(t, "first call", res(0), "warm")
	wantOK(t, "call after the kill between calls", res(1), "after the kill")
	if d := res(2); !d.IsError || !strings.Contains(d.Text, "may or may not have taken effect") {
		t.Errorf("killed during counter_increment: the model saw %s, want the shim's clear outcome-unknown error", seen(d))
	}
	wantOK(t, "counter_increment after the kill", res(3), "1")
	wantOK(t, "echo killed mid-call (read-only: re-sent)", res(4), "read-only")
	wantOK(t, "last echo", res(5), "last")
	// Every process the shim started was opened the way Claude Code
	// opened the first: the shim replays the client's own opening.
	first := e.Openings[0]
	for _, o := range e.Openings[1:] {
		if o.Method != first.Method || o.Version != first.Version {
			t.Errorf("the shim opened server %s; Claude Code opened the first with %s %s", o, first.Method, first.Version)
		}
	}
	wantHooksRan(t, r, "PreToolUse")
	return e
}

// TestScenario15GoSDKEra runs scenarioGoSDKEra alone and through the shim,
// side by side, on the Claude Code release of the run (CI runs it on
// 2.1.328 and 2.1.332). The shim must not change the era Claude Code
// negotiates: the first server process of both sessions is opened the
// same way.
func TestScenario15GoSDKEra(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	t.Parallel()
	var runs [2]eraRun
	t.Run("modes", func(t *testing.T) {
		for i, m := range []mode{alone, healed} {
			t.Run(m.String(), func(t *testing.T) {
				t.Parallel()
				runs[i] = scenarioGoSDKEra(t, m)
			})
		}
	})
	if t.Failed() {
		return
	}
	a, h := runs[0].Openings[0], runs[1].Openings[0]
	t.Logf("era negotiated: alone %s %s; with mcp-heal %s %s", a.Method, a.Version, h.Method, h.Version)
	if a.Method != h.Method || a.Version != h.Version {
		t.Errorf("Claude Code opened the server with %s %s alone but %s %s through the shim", a.Method, a.Version, h.Method, h.Version)
	}
	rows := [][3]string{
		{"killed between calls", runs[0].Between, runs[1].Between},
		{"counter_increment killed during the call", runs[0].During, runs[1].During},
		{"counter_increment after it", runs[0].After, runs[1].After},
		{"echo (read-only) killed during the call", runs[0].ReadOnly, runs[1].ReadOnly},
	}
	for _, r := range rows {
		t.Logf("%s:\n  alone:          %s\n  with mcp-heal:  %s", r[0], r[1], r[2])
	}
}
