//go:build unix

package proc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
)

// startChild starts the command at path: under g when given, else under
// a guardian of its own when configured, else directly.
func startChild(cfg Config, path string, log *slog.Logger, g *guardian.Guardian) (spawned, error) {
	if g == nil && len(cfg.Guardian) > 0 {
		var err error
		if g, err = guardian.Start(cfg.Guardian, stderrFile(cfg)); err != nil {
			log.Warn("no guardian: the server's descendants may outlive a killed shim", "err", err)
		} else {
			sp, err := runGuarded(cfg, path, log, g)
			if err != nil {
				g.Close()
				return sp, err
			}
			sp.ch = guarded{c: sp.ch.(guarded).c, own: g}
			return sp, nil
		}
	}
	if g != nil {
		return runGuarded(cfg, path, log, g)
	}
	return startDirect(cfg, path)
}

func runGuarded(cfg Config, path string, log *slog.Logger, g *guardian.Guardian) (spawned, error) {
	spec := guardian.Spec{
		Path: path, Argv: append([]string{cfg.Path}, cfg.Args...),
		Env: cfg.Env, Dir: cfg.Dir, StopStepMS: cfg.StopStep.Milliseconds(),
	}
	c, err := g.Run(spec)
	var se *guardian.StartError
	switch {
	case err == nil:
		return spawned{ch: guarded{c: c}, pid: c.PID, started: c.Started, stdin: c.Stdin, mark: c.MarkWrite(), stdout: c.Stdout, stderr: c.Stderr}, nil
	case errors.As(err, &se):
		return spawned{}, fmt.Errorf("start %q: %w", cfg.Path, se.Err)
	}
	// The server still runs, only without the guarantee: say so rather
	// than leave the user without a server.
	log.Warn("no guardian: the server's descendants may outlive a killed shim", "err", err)
	return startDirect(cfg, path)
}

// startDirect starts the command as our own child with our own pipes (not
// cmd.StdoutPipe, so that cmd.Wait returns when the child exits even if a
// grandchild still holds the write ends, and so that closing the read ends
// unblocks the readers).
func startDirect(cfg Config, path string) (spawned, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return spawned{}, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return spawned{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return spawned{}, err
	}
	cmd := exec.Command(path, cfg.Args...)
	cmd.Args[0] = cfg.Path
	cmd.Env = cfg.Env
	cmd.Dir = cfg.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// Own process group: the stop ladder and crash clean-up signal the
	// whole group, so npx/uv wrapper trees leave no orphans.
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return spawned{}, fmt.Errorf("start %q: %w", cfg.Path, err)
	}
	return spawned{ch: direct{cmd}, pid: cmd.Process.Pid, started: time.Now(), stdin: inW, stdout: outR, stderr: errR}, nil
}

// direct is a child of ours.
type direct struct{ cmd *exec.Cmd }

func (d direct) wait() status {
	err := d.cmd.Wait()
	// Whatever the child left behind (an npx wrapper's server, a shell's
	// background job) goes with it.
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	ps := d.cmd.ProcessState
	if ps == nil {
		return status{err: err}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return status{sig: ws.Signal()}
	}
	return status{exited: true, code: ps.ExitCode()}
}

func (d direct) signal(sig syscall.Signal) error { return syscall.Kill(-d.cmd.Process.Pid, sig) }

func (direct) release() {}

// guarded is a child under a guardian: the guardian reaps it, kills what
// is left of its tree and signals its group for us. own, when set, is a
// guardian started for this child alone, let go with it.
type guarded struct {
	c   *guardian.Child
	own *guardian.Guardian
}

func (g guarded) wait() status {
	st := g.c.Status()
	out := status{exited: st.Exited, code: st.Code, sig: syscall.Signal(st.Signal), note: st.DaemonNote(), strays: len(st.Daemons)}
	if st.Err != "" {
		out.err = errors.New(st.Err)
	}
	if st.Detached {
		out.detached = true
	}
	if st.Lost {
		out.note = joinNote("its guardian died, so its process group and tree were killed", out.note)
	}
	return out
}

func joinNote(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

func (g guarded) signal(sig syscall.Signal) error { return g.c.Signal(sig) }

func (g guarded) release() {
	if g.own != nil {
		g.own.Close()
	}
}

// StartUnder starts the command under the guardian g (a kept server's).
func StartUnder(cfg Config, g *guardian.Guardian) (*Process, error) { return start(cfg, g) }

// Adopt serves a server already running under a guardian: the kept
// server a shim attached to. prefix is read before its stdout.
func Adopt(cfg Config, c *guardian.Child, prefix []byte) *Process {
	cfg = withDefaults(cfg)
	return newProcess(cfg, cfg.Log, spawned{ch: guarded{c: c}, pid: c.PID, started: c.Started, stdin: c.Stdin, mark: c.MarkWrite(), stdout: c.Stdout, stderr: c.Stderr, prefix: prefix})
}
