//go:build unix

package testenv

import (
	"os/exec"
	"syscall"
	"testing"
)

// A Process is a real process a test starts to stand in for another: a
// session's Claude Code, a shim, a stranger whose pid a record names.
type Process struct {
	*exec.Cmd
	done chan struct{}
}

// StartProcess starts name with args in a process group of its own, and
// reaps it when it ends (a test sees it gone, not a zombie); when tb ends,
// the group is killed and the process waited for.
func StartProcess(tb testing.TB, name string, args ...string) *Process {
	tb.Helper()
	p := &Process{Cmd: exec.Command(name, args...), done: make(chan struct{})}
	p.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() { p.Wait(); close(p.done) }()
	tb.Cleanup(p.Kill)
	return p
}

// Exited is closed once p has ended and been reaped (p.ProcessState
// then says how it ended).
func (p *Process) Exited() <-chan struct{} { return p.done }

// Kill SIGKILLs p's process group (p and what it started, which may
// outlive it) and returns once p is reaped.
func (p *Process) Kill() {
	syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// EndedPID returns the pid of a process that has run to its end and been
// reaped: one that names no process (until the system reuses it), as a
// record or an incident of a process long gone does.
func EndedPID(tb testing.TB) int {
	tb.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		tb.Fatalf("run true: %v", err)
	}
	return cmd.Process.Pid
}
