//go:build unix

package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SignalCounter is a real process (sh) standing in for a shim in tests of
// what signals the hooks and doctor send: it records each SIGHUP it gets.
type SignalCounter struct {
	PID  int
	file string
}

var unignoreOnce sync.Once

// StartSignalCounter starts one, killed when tb ends, and returns once its
// traps are installed.
func StartSignalCounter(tb testing.TB) *SignalCounter {
	tb.Helper()
	f := filepath.Join(tb.TempDir(), "signals")
	// A non-interactive sh cannot trap a signal ignored when it started,
	// and a child inherits ignored signals: under nohup, say, the trap
	// would never run. Handling them here makes them default again in the
	// child (exec resets handled signals, not ignored ones).
	unignoreOnce.Do(func() { signal.Notify(make(chan os.Signal, 16), syscall.SIGHUP, syscall.SIGUSR1) })
	cmd := exec.Command("sh", "-c", `trap 'echo hup >> "$0"' HUP; trap 'echo usr1 >> "$0"' USR1; echo ready >> "$0"; while :; do sleep 0.05; done`, f)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	s := &SignalCounter{PID: cmd.Process.Pid, file: f}
	s.waitFor(tb, "ready", 1)
	return s
}

func (s *SignalCounter) count(word string) int {
	b, _ := os.ReadFile(s.file)
	return bytes.Count(b, []byte(word+"\n"))
}

// HUPs is how many SIGHUPs it has handled so far.
func (s *SignalCounter) HUPs() int { return s.count("hup") }

// WaitHUPs waits (10s at most) until it has handled n SIGHUPs, and fails
// if it got more.
func (s *SignalCounter) WaitHUPs(tb testing.TB, n int) {
	tb.Helper()
	s.waitFor(tb, "hup", n)
	if h := s.HUPs(); h != n {
		tb.Fatalf("process %d got %d SIGHUP, want %d", s.PID, h, n)
	}
}

// NoHUP checks that it got no SIGHUP from something that has finished (a
// hook that returned): it sends itself a SIGUSR1 marker, and once the
// shell has run the marker's trap it has run any earlier SIGHUP's too (sh
// runs pending traps in signal-number order, and SIGHUP is 1). No sleep
// that hopes the signal would have arrived by then.
func (s *SignalCounter) NoHUP(tb testing.TB) {
	tb.Helper()
	n := s.count("usr1")
	if err := syscall.Kill(s.PID, syscall.SIGUSR1); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	s.waitFor(tb, "usr1", n+1)
	if h := s.HUPs(); h != 0 {
		tb.Fatalf("process %d got %d SIGHUP, want none", s.PID, h)
	}
}

func (s *SignalCounter) waitFor(tb testing.TB, word string, n int) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.count(word) < n {
		if time.Now().After(deadline) {
			tb.Fatalf("testenv: process %d: %d %q lines after 10s, want %d", s.PID, s.count(word), word, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
