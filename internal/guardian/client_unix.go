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

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// Guardian is the shim's connection to its guardian process. One guardian
// serves every respawn of the shim's server, so a respawn costs no extra
// exec; it lives until Close or the shim's exit.
type Guardian struct {
	c   *ctrl
	cmd *exec.Cmd

	// kept: a kept guardian, which must hear of the writes to its
	// server's stdin a pipe does not make atomic (MarkWrite).
	kept bool

	mu       sync.Mutex
	detached bool // Detach closed the connection: its runs go on
	nextID   int
	pending  map[int]chan startReply
	runs     map[int]*Child
	dead     chan struct{}
}

type startReply struct {
	m   msg
	fds []int
}

// Start starts a guardian with argv (the mcp-heal binary and "guardian");
// its log goes to stderr (nil: discarded).
func Start(argv []string, stderr *os.File) (*Guardian, error) {
	if len(argv) == 0 {
		return nil, errors.New("no guardian command")
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
	if stderr != nil {
		cmd.Stderr = stderr
	}
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
	g := &Guardian{c: newCtrl(uc), cmd: cmd, pending: map[int]chan startReply{}, runs: map[int]*Child{}, dead: make(chan struct{})}
	go g.read()
	return g, nil
}

// PID is the guardian's pid (0 for a kept guardian reached by Dial).
func (g *Guardian) PID() int {
	if g.cmd == nil {
		return 0
	}
	return g.cmd.Process.Pid
}

// Dead is closed once the guardian is gone.
func (g *Guardian) Dead() <-chan struct{} { return g.dead }

// Close lets the guardian go: it stops whatever still runs with the ladder
// and exits.
func (g *Guardian) Close() { g.c.c.Close() }

// Detach lets a kept guardian go while its server runs on: the runs end
// here as detached, and the guardian keeps the server for the next shim.
func (g *Guardian) Detach() {
	g.mu.Lock()
	g.detached = true
	g.mu.Unlock()
	g.c.c.Close()
}

// read dispatches the guardian's events. When the guardian dies, every
// server it ran is killed here: the kernel killed the leaders on Linux
// (Pdeathsig); the rest of each group and tree is ours to kill.
func (g *Guardian) read() {
	for {
		m, fds, err := g.c.recv()
		if err != nil {
			break
		}
		g.mu.Lock()
		switch m.Ev {
		case "started", "error":
			if ch := g.pending[m.ID]; ch != nil {
				delete(g.pending, m.ID)
				if r := g.runs[m.ID]; r != nil && m.Ev == "started" {
					r.PID, r.Started = m.PID, time.Unix(0, m.Started)
				} else {
					delete(g.runs, m.ID)
				}
				ch <- startReply{m, fds}
				fds = nil
			}
		case "exit":
			if r := g.runs[m.ID]; r != nil && m.Status != nil {
				delete(g.runs, m.ID)
				r.status = *m.Status
				close(r.done)
			}
		}
		g.mu.Unlock()
		closeFDs(fds)
	}
	g.mu.Lock()
	runs := g.runs
	g.runs = map[int]*Child{}
	for id, ch := range g.pending {
		close(ch)
		delete(g.pending, id)
	}
	close(g.dead)
	detached := g.detached
	g.mu.Unlock()
	for _, r := range runs {
		if detached {
			// Left running on purpose (a kept server): not ours to kill.
			r.status = Status{Detached: true}
			close(r.done)
			continue
		}
		if r.PID <= 0 {
			// Never started: Run's reply channel is closed.
			continue
		}
		// The guardian is gone, so nobody holds the leader unreaped: its
		// pid may already name another process. Signal the group only
		// while the pid still leads it and started when the server did
		// (Sweep then finds the rest by their cookie).
		if p, err := procinfo.Get(r.PID); err == nil && p.PGID == r.PID && p.Start.Sub(r.Started).Abs() < 2*time.Second {
			_ = syscall.Kill(-r.PID, syscall.SIGKILL)
		}
		r.status = Status{Lost: true, Signal: int(syscall.SIGKILL), Daemons: Sweep(r.cookie, r.PID, r.Started)}
		close(r.done)
	}
	g.c.close()
}

// Run asks the guardian to start spec and returns the running server. A
// start failure of the server itself (not found, not executable) is a
// *StartError wrapping what exec would give.
func (g *Guardian) Run(spec Spec) (*Child, error) {
	if spec.Cookie == "" {
		spec.Cookie = NewCookie()
	}
	reply := make(chan startReply, 1)
	g.mu.Lock()
	select {
	case <-g.dead:
		g.mu.Unlock()
		return nil, errors.New("guardian is gone")
	default:
	}
	g.nextID++
	id := g.nextID
	ch := &Child{g: g, id: id, cookie: spec.Cookie, done: make(chan struct{})}
	g.pending[id] = reply
	g.runs[id] = ch
	g.mu.Unlock()
	if err := g.c.send(msg{Op: "start", ID: id, Spec: &spec}); err != nil {
		return nil, fmt.Errorf("guardian: %w", err)
	}
	r, ok := <-reply
	if !ok {
		return nil, errors.New("guardian died while starting the server")
	}
	m := r.m
	switch {
	case m.Ev == "error" && m.Errno != 0:
		return nil, &StartError{&fs.PathError{Op: "fork/exec", Path: spec.Path, Err: syscall.Errno(m.Errno)}}
	case m.Ev == "error":
		return nil, &StartError{errors.New(m.Err)}
	case len(r.fds) != 3:
		closeFDs(r.fds)
		_ = g.c.send(msg{Op: "signal", ID: id, Sig: int(syscall.SIGKILL)})
		return nil, fmt.Errorf("guardian: %d descriptors instead of 3", len(r.fds))
	}
	// read() filled PID and Started before replying, and from now on
	// reports this run's exit (or kills it if the guardian dies).
	ch.Stdin, ch.Stdout, ch.Stderr = pollable(r.fds[0], "stdin"), pollable(r.fds[1], "stdout"), pollable(r.fds[2], "stderr")
	return ch, nil
}

// pollable wraps a received descriptor non-blocking, so Go's poller serves
// it like the pipes os.Pipe makes (os.NewFile registers a non-blocking
// descriptor with the poller).
func pollable(fd int, name string) *os.File {
	_ = syscall.SetNonblock(fd, true)
	return os.NewFile(uintptr(fd), "server-"+name)
}

// Child is one server run under a guardian, seen from the shim.
type Child struct {
	PID     int
	Started time.Time
	// Stdin, Stdout and Stderr are the shim's ends of the server's pipes,
	// non-blocking (served by Go's poller).
	Stdin, Stdout, Stderr *os.File

	g      *Guardian
	id     int
	cookie string
	done   chan struct{}
	status Status
}

// MarkWrite is how a kept guardian hears of a write to its server's stdin
// that may leave a line unfinished in the pipe (mark(true) before it,
// mark(false) once the line ends): a shim killed then leaves the start of
// a line in the server's stdin, and the guardian, told so, ends that line
// before anyone writes again, instead of the next client's first message
// being read glued to it. The writer that decides when is proc's (it owns
// the writes); nil for a guardian that is not kept, which needs no marks.
func (c *Child) MarkWrite() func(open bool) {
	if !c.g.kept {
		return nil
	}
	return func(open bool) { _ = c.g.c.send(msg{Op: "writing", ID: c.id, Open: open}) }
}

// Done is closed when the server's leader has exited and its tree is gone.
func (ch *Child) Done() <-chan struct{} { return ch.done }

// Status is how the server ended; valid after Done.
func (ch *Child) Status() Status {
	<-ch.done
	return ch.status
}

// Signal asks the guardian to signal the server's process group.
func (ch *Child) Signal(sig syscall.Signal) error {
	select {
	case <-ch.done:
		return os.ErrProcessDone
	default:
	}
	return ch.g.c.send(msg{Op: "signal", ID: ch.id, Sig: int(sig)})
}
