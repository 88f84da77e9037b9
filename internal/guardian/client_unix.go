//go:build unix

package guardian

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Child is a server running under a guardian, seen from the shim.
type Child struct {
	PID     int
	Started time.Time
	// Stdin, Stdout and Stderr are the shim's ends of the server's pipes,
	// non-blocking (served by Go's poller).
	Stdin, Stdout, Stderr *os.File

	c        *ctrl
	guardian *exec.Cmd
	cookie   string
	done     chan struct{}
	status   Status
	once     sync.Once
}

// Spawn starts a guardian with argv (the mcp-heal binary and "guardian"),
// asks it to start spec, and returns the running server. A start failure
// of the server itself (not found, not executable) comes back as the
// *fs.PathError exec would give.
func Spawn(argv []string, spec Spec, stderr *os.File) (*Child, error) {
	if len(argv) == 0 {
		return nil, errors.New("no guardian command")
	}
	if spec.Cookie == "" {
		spec.Cookie = NewCookie()
	}
	syscall.ForkLock.RLock()
	sp, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(sp[0])
		syscall.CloseOnExec(sp[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("guardian socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(sp[0]), "guardian-ctl"), os.NewFile(uintptr(sp[1]), "guardian-ctl")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{theirs} // fd 3
	cmd.Stderr = stderr
	// Its own session: the signals aimed at the shim's group or terminal
	// (Ctrl-C in the terminal running Claude Code) must not reach it, or
	// the server would lose its guardian before the shim stops it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		mine.Close()
		return nil, fmt.Errorf("start guardian: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	uc, err := fileConn(mine)
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	c := newCtrl(uc)
	fail := func(err error) (*Child, error) {
		c.close()
		return nil, err
	}
	if err := c.send(msg{Op: "start", Spec: &spec}); err != nil {
		return fail(fmt.Errorf("guardian: %w", err))
	}
	m, fds, err := c.recv(3)
	if err != nil {
		return fail(fmt.Errorf("guardian did not answer: %w", err))
	}
	switch {
	case m.Ev == "error" && m.Errno != 0:
		return fail(&StartError{&fs.PathError{Op: "fork/exec", Path: spec.Path, Err: syscall.Errno(m.Errno)}})
	case m.Ev == "error":
		return fail(&StartError{errors.New(m.Err)})
	case m.Ev != "started" || len(fds) != 3:
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return fail(fmt.Errorf("guardian: unexpected answer %q", m.Ev))
	}
	ch := &Child{
		PID: m.PID, Started: time.Unix(0, m.Started),
		c: c, guardian: cmd, cookie: spec.Cookie, done: make(chan struct{}),
	}
	ch.Stdin, ch.Stdout, ch.Stderr = pollable(fds[0], "stdin"), pollable(fds[1], "stdout"), pollable(fds[2], "stderr")
	go ch.watch()
	return ch, nil
}

// pollable wraps a received descriptor non-blocking, so Go's poller serves
// it like the pipes os.Pipe makes (os.NewFile registers a non-blocking
// descriptor with the poller).
func pollable(fd int, name string) *os.File {
	_ = syscall.SetNonblock(fd, true)
	return os.NewFile(uintptr(fd), "server-"+name)
}

// watch waits for the exit report; if the guardian dies first, it kills
// the server's group and sweeps the tree itself.
func (ch *Child) watch() {
	for {
		m, _, err := ch.c.recv(0)
		if err != nil {
			// The guardian died (or was killed) without reporting: the
			// kernel killed the leader on Linux (Pdeathsig); the rest of
			// the group and the marked tree are ours to kill.
			_ = syscall.Kill(-ch.PID, syscall.SIGKILL)
			ch.status = Status{Lost: true, Signal: int(syscall.SIGKILL), Daemons: Sweep(ch.cookie, ch.PID)}
			close(ch.done)
			return
		}
		if m.Ev == "exit" && m.Status != nil {
			ch.status = *m.Status
			close(ch.done)
			return
		}
	}
}

// Done is closed when the server's leader has exited and its tree is gone.
func (ch *Child) Done() <-chan struct{} { return ch.done }

// Status is how the server ended; valid after Done.
func (ch *Child) Status() Status {
	<-ch.done
	return ch.status
}

// GuardianPID is the guardian's pid.
func (ch *Child) GuardianPID() int { return ch.guardian.Process.Pid }

// Signal asks the guardian to signal the server's process group.
func (ch *Child) Signal(sig syscall.Signal) error {
	select {
	case <-ch.done:
		return os.ErrProcessDone
	default:
	}
	return ch.c.send(msg{Op: "signal", Sig: int(sig)})
}

// Release closes the control connection: a guardian whose server still
// runs stops it with the ladder; one whose server exited just exits.
func (ch *Child) Release() {
	ch.once.Do(func() {
		<-ch.done
		ch.c.close()
	})
}
