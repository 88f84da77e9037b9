//go:build unix

package guardian

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Serve is the guardian: it reads a start request from the control socket
// ctl (inherited from the shim), starts the server, hands its stdio back,
// and then watches both: it reports the server's exit, and stops the server
// when the shim goes away. It returns when the server and its whole tree
// are gone.
func Serve(ctl *os.File, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	uc, err := fileConn(ctl)
	if err != nil {
		return err
	}
	c := newCtrl(uc)
	defer c.close()
	// A shim gone away leaves our stderr a broken pipe: a log line must not
	// kill us (Go exits on EPIPE to fd 2 unless SIGPIPE is handled) before
	// the server is stopped.
	signal.Ignore(syscall.SIGPIPE, syscall.SIGHUP, syscall.SIGINT)
	if err := becomeSubreaper(); err != nil {
		log.Debug("no sub-reaper", "err", err)
	}
	m, _, err := c.recv(0)
	if err != nil {
		return fmt.Errorf("read start request: %w", err)
	}
	if m.Op != "start" || m.Spec == nil {
		return errors.New("first control message is not a start request")
	}
	srv, files, err := startServer(m.Spec)
	if err != nil {
		var errno syscall.Errno
		errors.As(err, &errno)
		_ = c.send(msg{Ev: "error", Err: err.Error(), Errno: int(errno)})
		return nil
	}
	err = c.send(msg{Ev: "started", PID: srv.pid, Started: srv.started.UnixNano()}, files...)
	for _, f := range files {
		// The shim's copies are the only ones: its death closes the
		// server's stdin, the first step of the ladder.
		f.Close()
	}
	if err != nil {
		log.Debug("hand over the server's stdio", "err", err)
	}
	return srv.supervise(c, log)
}

// server is the running server, as its guardian sees it.
type server struct {
	spec    *Spec
	cmd     *exec.Cmd
	pid     int
	started time.Time
	exited  chan struct{} // closed once the leader is reaped
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
	s := &server{spec: spec, cmd: cmd, pid: cmd.Process.Pid, started: time.Now(), exited: make(chan struct{})}
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

// supervise serves the control connection until the server's tree is gone.
func (s *server) supervise(c *ctrl, log *slog.Logger) error {
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			m, _, err := c.recv(0)
			if err != nil {
				return
			}
			if m.Op == "signal" && m.Sig > 0 {
				s.signal(syscall.Signal(m.Sig))
			}
		}
	}()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	select {
	case <-s.exited:
		st := s.cleanup()
		if err := c.send(msg{Ev: "exit", Status: &st}); err != nil {
			log.Debug("report the server's exit", "err", err)
		}
		return nil
	case <-gone:
		log.Debug("shim gone: stopping the server", "pid", s.pid)
	case <-term:
		log.Debug("SIGTERM: stopping the server", "pid", s.pid)
	}
	s.stop()
	st := s.cleanup()
	_ = c.send(msg{Ev: "exit", Status: &st})
	return nil
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
// closed (the shim's end is the only one), so wait a step, SIGTERM the
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

// cleanup, once the leader is reaped, kills what is left: the rest of its
// group, cookie-marked processes elsewhere (daemons), and orphans that
// re-parented to us; it returns the leader's status.
func (s *server) cleanup() Status {
	// The leader is reaped but the group may live on (a shell's background
	// job, an npx wrapper's server): it cannot have been reused while a
	// member lives, and if none does the kill fails harmlessly.
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	st := Status{Daemons: Sweep(s.spec.Cookie, s.pid)}
	reapOrphans()
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
