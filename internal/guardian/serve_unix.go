//go:build unix

package guardian

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Serve is the guardian: it starts servers when the shim asks (each
// respawn of the shim's server is one start; the guardian lives as long as
// the shim), hands their stdio back, signals them on request, and reports
// each exit once its tree is gone. When the shim goes away it stops the
// servers with the ladder and returns once their trees are gone.
func Serve(ctl *os.File, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	uc, err := fileConn(ctl)
	if err != nil {
		return err
	}
	g := &guard{c: newCtrl(uc), log: log, servers: map[int]*server{}}
	defer g.c.close()
	// A shim gone away leaves our stderr a broken pipe: a log line must not
	// kill us (Go exits on EPIPE to fd 2 unless SIGPIPE is handled) before
	// the servers are stopped. We have no terminal (setsid): SIGHUP and
	// SIGINT can only come from someone guessing.
	signal.Ignore(syscall.SIGPIPE, syscall.SIGHUP, syscall.SIGINT)
	if err := becomeSubreaper(); err != nil {
		log.Debug("no sub-reaper", "err", err)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			m, fds, err := g.c.recv()
			closeFDs(fds)
			if err != nil {
				return
			}
			g.handle(m)
		}
	}()
	select {
	case <-gone:
		log.Debug("shim gone: stopping the server")
	case <-term:
		log.Debug("SIGTERM: stopping the server")
	}
	g.stopAll()
	return nil
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// guard is the guardian's state.
type guard struct {
	c   *ctrl // the shim; nil while a kept server is detached
	log *slog.Logger
	// kept is set for a guardian that outlives its shims (keep_unix.go).
	kept *keptState

	mu      sync.Mutex
	servers map[int]*server // live, by run id
	wg      sync.WaitGroup  // one per live server's watcher
}

func (g *guard) handle(m msg) {
	switch m.Op {
	case "start":
		if m.Spec == nil {
			return
		}
		if g.kept != nil {
			g.keptStart(m)
			return
		}
		srv, files := g.start(m)
		if srv == nil {
			return
		}
		g.mu.Lock()
		g.servers[m.ID] = srv
		g.wg.Add(1)
		g.mu.Unlock()
		err := g.send(msg{Ev: "started", ID: m.ID, PID: srv.pid, Started: srv.started.UnixNano()}, files...)
		for _, f := range files {
			// The shim's copies are the only ones: its death closes the
			// server's stdin, the first step of the ladder.
			f.Close()
		}
		if err != nil {
			g.log.Debug("hand over the server's stdio", "err", err)
		}
		go g.watch(m.ID, srv)
	case "signal":
		g.mu.Lock()
		srv := g.servers[m.ID]
		g.mu.Unlock()
		if srv != nil && m.Sig > 0 {
			srv.signal(syscall.Signal(m.Sig))
		}
	default:
		if g.kept != nil {
			g.keptOp(m)
		}
	}
}

// start starts m's server. When it cannot, it tells the shim why (with
// the errno, which the shim's respawn reads) and returns nil.
func (g *guard) start(m msg) (*server, []*os.File) {
	srv, files, err := startServer(m.Spec)
	if err != nil {
		var errno syscall.Errno
		errors.As(err, &errno)
		_ = g.send(msg{Ev: "error", ID: m.ID, Err: err.Error(), Errno: int(errno)})
		return nil, nil
	}
	return srv, files
}

// send sends to the shim, if one is attached.
func (g *guard) send(m msg, files ...*os.File) error {
	g.mu.Lock()
	c := g.c
	g.mu.Unlock()
	if c == nil {
		return errors.New("no shim attached")
	}
	return c.send(m, files...)
}

// watch reports the server's exit once its tree is gone.
func (g *guard) watch(id int, srv *server) {
	defer g.wg.Done()
	<-srv.exited
	st := g.cleanup(srv)
	g.mu.Lock()
	delete(g.servers, id)
	g.mu.Unlock()
	if g.kept != nil {
		g.keptExited(srv, st)
	}
	if err := g.send(msg{Ev: "exit", ID: id, Status: &st}); err != nil {
		g.log.Debug("report a server's exit", "err", err)
	}
}

// stopAll stops every live server with the ladder and waits until their
// trees are gone.
func (g *guard) stopAll() {
	g.mu.Lock()
	live := make([]*server, 0, len(g.servers))
	for _, s := range g.servers {
		live = append(live, s)
	}
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	g.wg.Wait()
}

// others lists the leaders of the live servers other than srv.
func (g *guard) others(srv *server) map[int]bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[int]bool{}
	for _, s := range g.servers {
		if s != srv {
			out[s.pid] = true
		}
	}
	return out
}

// server is one running server, as its guardian sees it.
type server struct {
	spec    *Spec
	pid     int
	started time.Time
	exited  chan struct{} // closed once the leader is reaped
	// files are the guardian's own ends of the server's stdin, stdout and
	// stderr, kept by a kept guardian to hand to the next shim.
	files   []*os.File
	ws      syscall.WaitStatus
	waitErr error
}

// startServer starts spec in a new process group, marked with the cookie,
// and returns the server with the shim's ends of its stdin, stdout and
// stderr pipes.
func startServer(spec *Spec) (*server, []*os.File, error) {
	var ends [6]*os.File // inR inW outR outW errR errW
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range ends[:i] {
				f.Close()
			}
			return nil, nil, err
		}
		ends[i], ends[i+1] = r, w
	}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(withoutVar(env, CookieVar), CookieVar+"="+spec.Cookie)
	argv := spec.Argv
	if len(argv) == 0 {
		argv = []string{spec.Path}
	}
	cmd := &exec.Cmd{Path: spec.Path, Args: argv, Env: env, Dir: spec.Dir}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0], ends[3], ends[5]
	cmd.SysProcAttr = serverAttr()
	err := cmd.Start()
	ends[0].Close()
	ends[3].Close()
	ends[5].Close()
	if err != nil {
		ends[1].Close()
		ends[2].Close()
		ends[4].Close()
		return nil, nil, fmt.Errorf("start %q: %w", argv[0], err)
	}
	s := &server{spec: spec, pid: cmd.Process.Pid, started: time.Now(), exited: make(chan struct{})}
	go func() {
		var ps *os.ProcessState
		ps, s.waitErr = cmd.Process.Wait()
		if ps != nil {
			s.ws, _ = ps.Sys().(syscall.WaitStatus)
		}
		close(s.exited)
	}()
	return s, []*os.File{ends[1], ends[2], ends[4]}, nil
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if len(e) > len(name) && e[:len(name)] == name && e[len(name)] == '=' {
			continue
		}
		out = append(out, e)
	}
	return out
}

// signal signals the server's group while its leader is not reaped (after
// that the group id may name someone else's group).
func (s *server) signal(sig syscall.Signal) {
	select {
	case <-s.exited:
	default:
		_ = syscall.Kill(-s.pid, sig)
	}
}

// stop runs the rest of the stop ladder: the server's stdin is already
// closed (the shim's end was the only one), so wait a step, SIGTERM the
// group, wait a step, SIGKILL it.
func (s *server) stop() {
	step := time.Duration(s.spec.StopStepMS) * time.Millisecond
	if step <= 0 {
		step = 2 * time.Second
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-s.exited:
			return
		case <-time.After(step):
		}
		s.signal(sig)
	}
	<-s.exited
}

// cleanup, once the leader is reaped, kills what is left of its tree: the
// rest of its group, processes that left the group (daemons), orphans
// that re-parented to us; it returns the leader's status.
func (g *guard) cleanup(s *server) Status {
	// The group cannot have been reused while a member lives, and if none
	// does the kill fails harmlessly.
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	daemons, ok := killTree(s.pid, s.spec.Cookie, g.others(s))
	if !ok {
		daemons = Sweep(s.spec.Cookie, s.pid, s.started)
		reapDead()
	}
	st := Status{Daemons: daemons}
	switch {
	case s.waitErr != nil:
		st.Err = s.waitErr.Error()
	case s.ws.Signaled():
		st.Signal = int(s.ws.Signal())
	default:
		st.Exited, st.Code = true, s.ws.ExitStatus()
	}
	return st
}
