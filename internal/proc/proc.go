// Package proc runs one MCP server child process in its own process group
// (under internal/guardian when Config.Guardian is set; on Windows in a job
// object), with pipes for the JSON-RPC lines, its stderr passed through (a
// redacted tail kept), its exit status decoded, and the stop ladder of the
// MCP stdio transport (close stdin, SIGTERM, SIGKILL).
//
// A Process is an upstream.Conn, and Dialer an upstream.Dialer, so the shim
// treats a child like any other upstream.
package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Config describes the command to run. The zero value of every optional
// field is usable.
type Config struct {
	Path string   // program; looked up in PATH when it has no slash
	Args []string // arguments after the program
	Env  []string // nil inherits the environment
	Dir  string
	// Stderr receives the child's stderr, line by line (lines of
	// different children never interleave mid-line when the same writer is
	// shared). nil discards it.
	Stderr io.Writer
	// TailLines is how many stderr lines to keep for errors (default 20).
	TailLines int
	// StopStep is how long each step of the stop ladder waits (default 2s;
	// the MCP stdio transport and PROTOCOL.md ask for 2-5 s).
	StopStep time.Duration
	// Log receives dropped non-JSON lines and lifecycle details; nil
	// discards.
	Log *slog.Logger
	// MaxMessage is the ceiling on one stdout message (default
	// jsonrpc.DefaultMaxMessage): a longer line is discarded as it
	// streams, and a response among them is replaced by an error reply
	// to its id (jsonrpc.DroppedReply).
	MaxMessage int
	// Guardian, when set, is the command that runs a guardian (the
	// mcp-heal binary and "guardian"): the child then runs under it, and
	// nothing it starts outlives the shim, even one killed with SIGKILL.
	// Empty: the child is started directly (on Linux the kernel kills it,
	// not its descendants, when the shim dies).
	Guardian []string
}

// MaxStderrLine is how much of one stderr line is kept and passed
// through: a server writing megabytes without a newline must not make the
// shim hold them (its tail keeps 512 bytes a line anyway).
const MaxStderrLine = 4 << 10

// stderrMu serialises writes of child stderr lines to shared writers.
var stderrMu sync.Mutex

// Process is one running child. Send is called by one goroutine at a time;
// Kill and Close may be called from any goroutine, any number of times.
type Process struct {
	cfg     Config
	log     *slog.Logger
	ch      child
	pid     int
	started time.Time

	stdin  *os.File
	stdout *os.File
	stderr *os.File
	bw     *bufio.Writer
	out    procinfo.Pipe // the pipe stdout reads (StdoutPipe)

	recv   chan []byte
	serve  serveChoice
	done   chan struct{}
	exited chan struct{} // closed once the child is reaped
	quit   chan struct{} // closed by Close once stopped: stop delivering
	exit   upstream.Exit
	tail   tail

	killReason atomic.Pointer[string]
	closeOnce  sync.Once
	quitOnce   sync.Once
	readers    sync.WaitGroup
}

var _ upstream.Conn = (*Process)(nil)

// Start starts the command in its own process group, under a guardian
// when cfg.Guardian is set. The caller must eventually call Close (or wait
// for Done) so the goroutines end.
func Start(cfg Config) (*Process, error) { return start(cfg, nil) }

// start starts the command, under g when given.
func start(cfg Config, g *guardian.Guardian) (*Process, error) {
	cfg = withDefaults(cfg)
	log := cfg.Log
	path := cfg.Path
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, fmt.Errorf("start %q: %w", path, err)
		}
		path = lp
	}
	sp, err := startChild(cfg, path, log, g)
	if err != nil {
		return nil, err
	}
	return newProcess(cfg, log, sp), nil
}

// newProcess starts serving a started child.
func newProcess(cfg Config, log *slog.Logger, sp spawned) *Process {
	p := &Process{
		cfg:     cfg,
		log:     log,
		ch:      sp.ch,
		pid:     sp.pid,
		started: sp.started,
		stdin:   sp.stdin,
		bw:      bufio.NewWriterSize(sp.writer(), 64<<10),
		stdout:  sp.stdout,
		stderr:  sp.stderr,
		out:     procinfo.PipeOf(sp.stdout),
		recv:    make(chan []byte, 64),
		serve:   serveChoice{chosen: make(chan struct{})},
		done:    make(chan struct{}),
		exited:  make(chan struct{}),
		quit:    make(chan struct{}),
		tail:    tail{n: cfg.TailLines},
	}
	p.readers.Add(2)
	go p.readStdout(sp.prefix)
	go p.readStderr()
	go p.wait()
	return p
}

// PID is the child's pid (and process group id).
func (p *Process) PID() int { return p.pid }

// StdoutPipe is the pipe the child's stdout writes to (zero: unknown):
// whichever process of its tree holds it is the server (procinfo.TreeOf).
func (p *Process) StdoutPipe() procinfo.Pipe { return p.out }

// Started is when the child was started.
func (p *Process) Started() time.Time { return p.started }

// Recv delivers each non-empty line the child wrote, in order (the shim
// validates and drops what is not JSON-RPC); it is closed after the child
// exited and its stdout was drained.
func (p *Process) Recv() <-chan []byte {
	p.serve.choose(nil)
	return p.recv
}

// Done is closed once the child has exited and its output was drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit says how the child ended; valid after Done is closed.
func (p *Process) Exit() upstream.Exit {
	<-p.done
	return p.exit
}

// StderrTail returns the last stderr lines so far (redacted).
func (p *Process) StderrTail() []string { return p.tail.get() }

// Send writes one message and a newline to the child's stdin, after any
// messages queued with SendLater.
func (p *Process) Send(msg []byte) error {
	if err := p.SendLater(msg); err != nil {
		return err
	}
	return p.bw.Flush()
}

// SendLater buffers one message for the next Send or Flush: the shim uses
// it when more client input is already waiting, so a burst costs one write
// instead of one per message. Same concurrency rule as Send.
func (p *Process) SendLater(msg []byte) error {
	if _, err := p.bw.Write(msg); err != nil {
		return err
	}
	return p.bw.WriteByte('\n')
}

// Flush writes what SendLater buffered.
func (p *Process) Flush() error { return p.bw.Flush() }

// ClosedStdout is the reason recorded when a server closed its stdout but
// did not exit.
const ClosedStdout = "closed its stdout but kept running"

// stdoutClosed ends a child whose stdout reached its end: a server that
// can no longer answer is over, whether it exits or not (one that closes
// stdout and lingers would otherwise be noticed only by a hang probe, and
// an idle one never). A child exiting closes its stdout too, so it gets
// one stop step to be reaped before it is killed.
func (p *Process) stdoutClosed() {
	t := time.NewTimer(p.cfg.StopStep)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-p.quit:
	case <-t.C:
		p.log.Warn("the server closed its stdout but kept running; killing it", "pid", p.pid)
		p.Kill(ClosedStdout)
	}
}

func (p *Process) readStderr() {
	defer p.readers.Done()
	r := jsonrpc.NewReaderMax(p.stderr, MaxStderrLine)
	for {
		line, err := r.Next()
		if tl, ok := err.(*jsonrpc.TooLongError); ok {
			line, err = fmt.Appendf(tl.Head, "… [%d more bytes of this line dropped]", tl.Len-int64(len(tl.Head))), nil
		}
		if err != nil {
			return
		}
		p.tail.add(line)
		if p.cfg.Stderr != nil {
			stderrMu.Lock()
			p.cfg.Stderr.Write(append(line, '\n'))
			stderrMu.Unlock()
		}
	}
}

// wait reaps the child (what is left of its group is killed with it),
// drains its output and then closes done and recv.
func (p *Process) wait() {
	st := p.ch.wait()
	at := time.Now()
	close(p.exited)
	drained := make(chan struct{})
	go func() { p.readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(time.Second):
		// A process outside the group (it called setsid) still holds the
		// pipes: stop reading them.
		p.stdout.Close()
		p.stderr.Close()
		<-drained
	}
	p.stdout.Close()
	p.stderr.Close()
	p.stdin.Close()
	p.exit = upstream.Exit{Exit: exitOf(st, at, p.started), StderrTail: p.tail.get()}
	if r := p.killReason.Load(); r != nil {
		p.exit.Reason = *r + " (" + p.exit.Reason + ")"
		p.exit.Killed = true
		if *r == ClosedStdout {
			p.exit.Cause = state.CauseStdoutClosed
		}
	}
	close(p.done)
	close(p.recv)
}

func exitOf(st status, at, started time.Time) state.Exit {
	e := state.Exit{At: at.UTC(), UptimeMS: at.Sub(started).Milliseconds()}
	switch {
	case st.detached:
		e.Cause = state.CauseKept
		e.Reason = "left running for the next client (kept)"
	case st.err != nil:
		e.Reason = fmt.Sprintf("wait failed: %v", st.err)
	case st.sig != 0:
		e.Cause, e.SignalNum = state.CauseSignal, int(st.sig)
		e.Signal = st.sig.String()
		e.Reason = fmt.Sprintf("killed by signal %d (%s)", int(st.sig), st.sig)
	default:
		c := st.code
		e.Code = &c
		e.Cause = state.CauseExit
		e.Reason = fmt.Sprintf("exited with code %d", c)
	}
	e.Strays = st.strays
	if st.note != "" {
		e.Reason += "; " + st.note
	}
	return e
}

// Kill sends SIGKILL to the child's process group at once; reason (e.g.
// "hung: no reply to ping in 5s") is recorded in the Exit. It does not wait.
func (p *Process) Kill(reason string) {
	if reason != "" {
		p.killReason.CompareAndSwap(nil, &reason)
	}
	_ = p.ch.signal(syscall.SIGKILL)
}

// Signal sends sig to the child's process group.
func (p *Process) Signal(sig syscall.Signal) error { return p.ch.signal(sig) }

// Close stops the child with the ladder: close its stdin and wait StopStep,
// SIGTERM its group and wait StopStep, then SIGKILL its group (Windows:
// close stdin, wait StopStep, terminate its job object); it returns
// once the child is reaped. Safe to call more than once.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		step := p.cfg.StopStep
		if !p.waitDone(step) {
			p.log.Debug("child ignored stdin close; sending SIGTERM", "pid", p.pid)
			// Windows has no SIGTERM (ErrUnsupported): straight to the kill.
			if err := p.ch.signal(syscall.SIGTERM); errors.Is(err, errors.ErrUnsupported) || !p.waitDone(step) {
				p.log.Debug("child ignored SIGTERM; sending SIGKILL", "pid", p.pid)
				_ = p.ch.signal(syscall.SIGKILL)
				<-p.done
			}
		}
	})
	// Readers of Recv may be gone: let the stdout reader finish.
	p.quitOnce.Do(func() { close(p.quit) })
	p.ch.release()
	return nil
}

// Detach lets go of a child that runs on under a kept guardian (whose
// connection the caller has let go of first): our ends of its pipes are
// closed, nothing is signalled, and Detach returns once the Process has
// ended.
func (p *Process) Detach() {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		p.stdout.Close()
		p.stderr.Close()
		<-p.done
	})
	p.quitOnce.Do(func() { close(p.quit) })
}

func (p *Process) waitDone(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}
