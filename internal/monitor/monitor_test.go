package monitor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// fake is a session's records over time, and the told/ markers.
type fake struct {
	now  time.Time
	told map[string]bool
	w    *watcher
}

func newFake() *fake {
	f := &fake{now: time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC), told: map[string]bool{}}
	o := Options{Session: "s1", ClaudePID: 100, Claim: func(k string) (bool, error) {
		if f.told[k] {
			return false, nil
		}
		f.told[k] = true
		return true, nil
	}}
	o.defaults()
	f.w = newWatcher(o)
	return f
}

func (f *fake) step(d time.Duration, recs ...*state.Record) []string {
	f.now = f.now.Add(d)
	return f.w.step(f.now, recs)
}

func rec(server string, pid int, st string, restarts int) *state.Record {
	return &state.Record{Server: server, Session: "s1", ClaudePID: 100, ShimPID: pid, ShimStart: "k", State: st, Restarts: restarts, ChildPID: pid + 1}
}

func sig9() *state.Exit { return &state.Exit{Cause: state.CauseSignal, SignalNum: 9, Signal: "killed"} }

// TestHealthySilent: a session whose servers start and run gets no line,
// however often the records are read.
func TestHealthySilent(t *testing.T) {
	f := newFake()
	for i := 0; i < 100; i++ {
		r := rec("mem", 10, state.Running, 0)
		if i == 0 {
			r.State = state.Starting
		}
		if out := f.step(time.Second, r); len(out) != 0 {
			t.Fatalf("poll %d: %q", i, out)
		}
	}
}

// TestRestartOnce: a restart is told once the server is up for Settle,
// claiming the note's key; a restart the model heard of already (the key
// claimed by the shim's note, or none: an error told it) is not told.
func TestRestartOnce(t *testing.T) {
	f := newFake()
	f.step(time.Second, rec("mem", 10, state.Running, 0))
	r := rec("mem", 10, state.Restarting, 1)
	r.NoteKey, r.LastExit = "n1", sig9()
	if out := f.step(time.Second, r); len(out) != 0 {
		t.Fatalf("while restarting: %q", out)
	}
	up := *r
	up.State, up.ChildStarted = state.Running, f.now.Add(500*time.Millisecond)
	if out := f.step(time.Second, &up); len(out) != 0 {
		t.Fatalf("up for 0.5 s: %q", out)
	}
	out := f.step(time.Second, &up)
	if len(out) != 1 || !strings.HasPrefix(out[0], `mcp-heal: nothing to run: MCP server "mem" was restarted and answers again: the server process was killed by signal 9 (SIGKILL); what the old process held only in memory is gone`) || !f.told["n1"] {
		t.Fatalf("after settling: %q, told %v", out, f.told)
	}
	if out := f.step(time.Minute, &up); len(out) != 0 {
		t.Fatalf("again: %q", out)
	}

	// The shim's note told it first.
	r2 := up
	r2.Restarts, r2.NoteKey, r2.ChildStarted = 2, "n2", f.now
	f.told["n2"] = true
	f.step(time.Second, &r2)
	if out := f.step(5*time.Second, &r2); len(out) != 0 {
		t.Fatalf("restart whose note was given: %q", out)
	}
	// An error told it: no key.
	r3 := r2
	r3.Restarts, r3.NoteKey, r3.ChildStarted = 3, "", f.now
	if out := f.step(5*time.Second, &r3); len(out) != 0 {
		t.Fatalf("restart told by an error: %q", out)
	}
}

// TestCrashLoopOneLine: a server that dies, fails to come up and is
// marked failed gets one line, with its stderr quoted, not one per
// restart; once it works again, one more line.
func TestCrashLoopOneLine(t *testing.T) {
	f := newFake()
	f.step(time.Second, rec("api", 20, state.Running, 0))
	var lines []string
	for i := 1; i <= 5; i++ {
		r := rec("api", 20, state.Backoff, i)
		r.NoteKey, r.ChildPID = "k"+strconv.Itoa(i), 0
		lines = append(lines, f.step(300*time.Millisecond, r)...)
	}
	failed := rec("api", 20, state.Failed, 6)
	failed.Failure, failed.ChildPID = "shim-failed", 0
	failed.LastExit = &state.Exit{Cause: state.CauseExit, Code: func() *int { c := 3; return &c }()}
	failed.StderrTail = []string{"ok", "Error: TOKEN is not set\x1b[2J"}
	for i := 0; i < 30; i++ {
		lines = append(lines, f.step(time.Second, failed)...)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `is failing (crash loop): the server process exited with code 3; last, on stderr, the server said: «Error: TOKEN is not set\x1b[2J»`) || !strings.Contains(lines[0], "/mcp-heal doctor api") {
		t.Fatalf("crash loop: %q", lines)
	}
	back := rec("api", 20, state.Running, 7)
	back.ChildStarted, back.NoteKey = f.now, "k7"
	lines = f.step(time.Second, back)
	lines = append(lines, f.step(time.Minute, back)...)
	if len(lines) != 1 || !strings.Contains(lines[0], "works again") || !f.told["k7"] {
		t.Fatalf("recovered: %q", lines)
	}
}

// TestCannotStart: one line naming why and what to run.
func TestCannotStart(t *testing.T) {
	f := newFake()
	r := rec("gone", 30, state.Failed, 0)
	r.Failure, r.LastError, r.ChildPID = "cannot-start", "command not found: /opt/gone", 0
	out := f.step(time.Second, r)
	if len(out) != 1 || out[0] != `mcp-heal: run /mcp-heal doctor gone: "gone" cannot start (command not found): /opt/gone. Its calls are refused until its command is fixed: continue without it and ask the user to run /mcp-heal doctor gone.` {
		t.Fatalf("%q", out)
	}
}

// TestRateBounded: a server that flaps gets at most one line per Gap, and
// the session at most Burst in a minute; what waits is told later, the
// newest news of each server.
func TestRateBounded(t *testing.T) {
	f := newFake()
	var recs []*state.Record
	for i := 0; i < 10; i++ {
		recs = append(recs, rec("s"+strconv.Itoa(i), 100+i, state.Running, 0))
	}
	f.step(time.Second, recs...)
	total := 0
	for round := 1; round <= 30; round++ {
		var now []*state.Record
		for i := range recs {
			r := rec("s"+strconv.Itoa(i), 100+i, state.Running, round)
			r.NoteKey, r.ChildStarted = "r"+strconv.Itoa(round)+"-"+strconv.Itoa(i), f.now.Add(-5*time.Second)
			now = append(now, r)
		}
		out := f.step(2*time.Second, now...)
		if len(out) > f.w.o.Burst {
			t.Fatalf("round %d: %d lines at once", round, len(out))
		}
		total += len(out)
	}
	// 60 s of flapping: at most Burst per minute.
	if total > 2*f.w.o.Burst {
		t.Fatalf("%d lines in 60 s, want at most %d", total, 2*f.w.o.Burst)
	}
}

// TestNotAnsweringOnce: a server that owes a call and gives no sign of
// life is told once per silence, with how long; a new silence again.
func TestNotAnsweringOnce(t *testing.T) {
	f := newFake()
	f.w.o.Now = func() time.Time { return f.now }
	f.step(time.Second, rec("slow", 40, state.Running, 0))
	r := rec("slow", 40, state.Running, 0)
	r.NotAnswering = &state.NotAnswering{Since: f.now.Add(-12 * time.Second), Method: "tools/call", Tool: "crunch"}
	var lines []string
	for i := 0; i < 10; i++ {
		lines = append(lines, f.step(time.Second, r)...)
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `mcp-heal: wait, or run /mcp-heal heal slow: MCP server "slow" has not answered for 13s: a call of its tool "crunch" is still outstanding`) {
		t.Fatalf("%q", lines)
	}
	f.step(time.Minute, rec("slow", 40, state.Running, 0))
	r2 := rec("slow", 40, state.Running, 0)
	r2.NotAnswering = &state.NotAnswering{Since: f.now, Method: "tools/call"}
	if out := f.step(time.Second, r2); len(out) != 1 {
		t.Fatalf("a new silence: %q", out)
	}
}

// TestHeldLineDroppedOnNewerNews: a line held back by the rate (one line
// per server per Gap) is worded from the server's newest record when it
// is sent, and dropped once that record no longer says it. Issue 32: a
// hung server was restarted and its next call answered, and two "has not
// answered" lines still reached the model afterwards, 0.2 s and 16 s
// later.
func TestHeldLineDroppedOnNewerNews(t *testing.T) {
	quietRec := func(since time.Time, restarts int) *state.Record {
		r := rec("hang", 50, state.Running, restarts)
		r.NotAnswering = &state.NotAnswering{Since: since, Method: "tools/call", Tool: "echo"}
		return r
	}
	for _, tc := range []struct {
		name  string
		newer func(f *fake) *state.Record // the news that comes while the line is held
	}{
		// The shim restarted the server (its error told the model: no
		// note key), and the new process answers.
		{"restarted", func(f *fake) *state.Record {
			r := rec("hang", 50, state.Running, 2)
			r.ChildStarted, r.LastExit = f.now, sig9()
			return r
		}},
		// The server answered the call it owed.
		{"answered", func(f *fake) *state.Record { return rec("hang", 50, state.Running, 1) }},
		// Restarted, and still the old silence's record for a moment:
		// the restart counts, not the field.
		{"restarted, record still quiet", func(f *fake) *state.Record { return quietRec(f.now.Add(-15*time.Second), 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.w.o.Now = func() time.Time { return f.now }
			f.step(time.Second, rec("hang", 50, state.Running, 0))
			// A restart told by the monitor: the server's Gap starts.
			up := rec("hang", 50, state.Running, 1)
			up.NoteKey, up.LastExit, up.ChildStarted = "n1", sig9(), f.now
			var lines []string
			lines = append(lines, f.step(time.Second, up)...)
			lines = append(lines, f.step(time.Second, up)...)
			if len(lines) != 1 || !strings.Contains(lines[0], "was restarted") {
				t.Fatalf("the restart: %q", lines)
			}
			// A new silence, 5 s into the Gap: held back.
			q := quietRec(f.now.Add(-12*time.Second), 1)
			q.ChildStarted = up.ChildStarted
			if out := f.step(5*time.Second, q); len(out) != 0 {
				t.Fatalf("within the gap: %q", out)
			}
			newer := tc.newer(f)
			newer.ChildStarted = f.now
			lines = nil
			for i := 0; i < 60; i++ {
				lines = append(lines, f.step(time.Second, newer)...)
			}
			for _, l := range lines {
				if strings.Contains(l, "has not answered") {
					t.Fatalf("a stale line after newer news: %q", lines)
				}
			}
		})
	}
}

// TestOneSilenceOneLine: a silence whose since moves while it lasts (the
// shim counts CPU time as a sign of life) is one silence: told once, not
// once per record the shim writes. Issue 32: "not answered for 4s", then
// "24s" 16 s later, of one hang.
func TestOneSilenceOneLine(t *testing.T) {
	f := newFake()
	f.w.o.Now = func() time.Time { return f.now }
	f.step(time.Second, rec("hang", 50, state.Running, 0))
	var lines []string
	for i := 0; i < 60; i++ {
		r := rec("hang", 50, state.Running, 0)
		r.NotAnswering = &state.NotAnswering{Since: f.now.Add(-4 * time.Second), Method: "tools/call", Tool: "echo"}
		lines = append(lines, f.step(time.Second, r)...)
	}
	if len(lines) != 1 {
		t.Fatalf("%d lines for one silence: %q", len(lines), lines)
	}
}

// TestPluginGone: the monitor's plugin is gone once its version directory
// is removed or marked orphaned, or its binary's file is removed.
func TestPluginGone(t *testing.T) {
	root := testenv.TempDir(t) // Wine fails t.TempDir's cleanup
	exe := filepath.Join(root, "bin")
	if err := os.WriteFile(exe, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	if PluginGone(root, exe) || PluginGone("", "") {
		t.Fatal("gone while installed")
	}
	os.Remove(exe)
	if !PluginGone("", exe) {
		t.Fatal("not gone without its binary")
	}
	os.WriteFile(filepath.Join(root, Orphaned), []byte("1"), 0o600)
	if !PluginGone(root, "") {
		t.Fatal("not gone when marked orphaned")
	}
	os.RemoveAll(root)
	if !PluginGone(root, "") {
		t.Fatal("not gone when removed")
	}
}

// TestIdleExitSilent: a server that exits by itself when idle (issue 30:
// state idle, no restart counted) and starts on the next call, again and
// again, gets no line: nothing of its state was lost to mcp-heal.
func TestIdleExitSilent(t *testing.T) {
	f := newFake()
	zero := 0
	for i := 0; i < 20; i++ {
		r := rec("ondemand", 10, state.Running, 0)
		r.IdleExits = i
		if i%2 == 1 {
			r.State, r.ChildPID, r.LastExit = state.Idle, 0, &state.Exit{Cause: state.CauseExit, Code: &zero}
		}
		if out := f.step(10*time.Second, r); len(out) != 0 {
			t.Fatalf("poll %d (%s): %q", i, r.State, out)
		}
	}
}

// TestShimGone (issue 32, item 4): a shim that died (killed, crashed)
// leaves its record, which the first reader keeps as a state.Gone; the
// monitor tells the model once, action first. A shim that exited removes
// its record (no Gone): no line. A line held back is dropped once a shim
// of that server runs again.
func TestShimGone(t *testing.T) {
	f := newFake()
	gone := map[int]*state.Gone{}
	f.w.o.Gone = func(pid int) (*state.Gone, error) {
		if g := gone[pid]; g != nil {
			return g, nil
		}
		return nil, os.ErrNotExist
	}
	r := rec("notes", 60, state.Running, 0)
	f.step(time.Second, r)
	gone[60] = &state.Gone{Record: *r, FoundGone: f.now.Add(time.Second)}
	gone[60].Updated = f.now
	var lines []string
	for i := 0; i < 5; i++ {
		lines = append(lines, f.step(time.Second)...)
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "mcp-heal: run /mcp reconnect notes: its shim exited at ") || !strings.Contains(lines[0], "(killed or crashed)") {
		t.Fatalf("a killed shim: %q", lines)
	}

	// Exited: its record removed, no Gone.
	f.step(time.Second, rec("other", 70, state.Running, 0))
	if out := f.step(time.Second); len(out) != 0 {
		t.Fatalf("a shim that exited: %q", out)
	}

	// Killed within the server's Gap, and Claude Code started a new
	// shim of it before the line could be sent: dropped.
	r2 := rec("notes", 80, state.Running, 0)
	f.step(time.Second, r2)
	gone[80] = &state.Gone{Record: *r2, FoundGone: f.now}
	lines = f.step(time.Second)
	for i := 0; i < 30; i++ {
		lines = append(lines, f.step(time.Second, rec("notes", 90, state.Running, 0))...)
	}
	if len(lines) != 0 {
		t.Fatalf("a dead shim's line after a new shim of it started: %q", lines)
	}
}
