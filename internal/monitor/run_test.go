//go:build unix

package monitor

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// ticks paces Run's polls (Options.Tick). Run takes a tick only once
// the poll before it has ended, so when polls(n) returns, n polls have
// run to their end: a test waits for the monitor without sleeping.
type ticks chan time.Time

func (tk ticks) polls(n int) {
	for range n + 1 {
		tk <- time.Now()
	}
}

// until polls until Run returns (its error), or fails the test after
// timeout.
func (tk ticks) until(t *testing.T, done <-chan error, timeout time.Duration, what string) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case tk <- time.Now():
		case <-done:
			return
		case <-deadline:
			t.Fatal(what)
		}
	}
}

// TestRunWatchesRecords: Run sees a record written into the state
// directory (a real record of a live process, read through
// state.FindSession), prints its failure once, says nothing of another
// session's failing shim, and ends when the session's Claude Code is
// gone.
func TestRunWatchesRecords(t *testing.T) {
	testenv.UseStateDir(t, testenv.TempDir(t))
	claude := testenv.StartProcess(t, "sleep", "60")
	out := &testenv.LockedBuffer{}
	done := make(chan error, 1)
	tk := make(ticks)
	go func() {
		done <- Run(context.Background(), Options{Session: "s1", ClaudePID: claude.Process.Pid, Out: out, Tick: tk})
	}()
	other := &state.Record{Server: "other", Session: "s2", ClaudePID: 1, ShimPID: claude.Process.Pid, State: state.Failed, Failure: "cannot-start", LastError: "command not found: /x", Started: time.Now()}
	if err := state.Write(other); err != nil {
		t.Fatal(err)
	}
	r := &state.Record{Server: "gone", Session: "s1", ClaudePID: claude.Process.Pid, ShimPID: os.Getpid(), State: state.Running, Started: time.Now()}
	if err := state.Write(r); err != nil {
		t.Fatal(err)
	}
	tk.polls(3)
	if s := out.String(); s != "" {
		t.Fatalf("healthy: %q", s)
	}
	r.State, r.Failure, r.LastError = state.Failed, "cannot-start", "command not found: /opt/gone"
	if err := state.Write(r); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 5*time.Second, "the line", func() bool {
		tk.polls(1)
		return strings.Contains(out.String(), `"gone" cannot start`)
	})
	tk.polls(10)
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Fatalf("%d lines: %q", n, out.String())
	}
	claude.Kill()
	tk.until(t, done, 5*time.Second, "Run did not end when Claude Code was gone")
}

// TestRunShimKilled (issue 32, item 4): a shim of the session killed with
// SIGKILL leaves its record; Run finds it gone (state.FindSession keeps it
// as a state.Gone) and prints one line, what to run first. Before, a
// killed shim was silent: the next call got "No such tool available".
func TestRunShimKilled(t *testing.T) {
	testenv.UseStateDir(t, testenv.TempDir(t))
	claude, shim := testenv.StartProcess(t, "sleep", "60"), testenv.StartProcess(t, "sleep", "60")
	fakeshim.WriteRecord(t, state.Record{Server: "notes", Session: "s1", ClaudePID: claude.Process.Pid, ShimPID: shim.Process.Pid, State: state.Running, ChildPID: 1, Started: time.Now()})
	out := &testenv.LockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	tk := make(ticks)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Session: "s1", ClaudePID: claude.Process.Pid, Out: out, Tick: tk}) }()
	// Run reads the state directory from the environment, which the
	// test's cleanup restores: it must have returned by then.
	defer func() {
		cancel()
		<-done
	}()
	tk.polls(3)
	if s := out.String(); s != "" {
		t.Fatalf("while the shim runs: %q", s)
	}
	// Long after the last record was written (the directory's time is
	// all the monitor looks at while nothing changes), as in a session:
	// a killed shim changes nothing there.
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(state.ShimsDir(), old, old); err != nil {
		t.Fatal(err)
	}
	tk.polls(3)
	shim.Kill()
	testenv.WaitFor(t, 5*time.Second, "the line", func() bool {
		tk.polls(1)
		return out.String() != ""
	})
	tk.polls(10)
	if s := out.String(); strings.Count(s, "\n") != 1 || !strings.HasPrefix(s, "mcp-heal: run /mcp reconnect notes: its shim exited at ") {
		t.Fatalf("after the kill: %q", s)
	}
}
