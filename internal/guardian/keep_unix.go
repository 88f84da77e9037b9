//go:build unix

package guardian

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// keptState is a kept guardian's own state, guarded by guard.mu.
type keptState struct {
	opts  KeepOptions
	ln    *net.UnixListener
	srv   *server // the live server, nil when none
	srvID int     // its run id, as the attached shim knows it
	epoch int
	drain *drainer
	// midWrite: the attached shim said it was writing to the server's
	// stdin (a write a pipe does not make atomic) and has not said it is
	// done; the run id it was writing to.
	midWrite int
	timer    *time.Timer
	since    time.Time
	exit     chan struct{}
	finished chan struct{}  // closed once the server and its tree are gone
	stoppers sync.WaitGroup // stop requests still to be answered
	once     sync.Once
	lastWhy  string
}

// ServeKept is a kept guardian: it serves shims that connect to ln (one
// at a time; the first one is the shim that started it), keeps the server
// running for opts.Keep after the last one went away, then stops it with
// the ladder and returns. It also returns on a stop request or SIGTERM.
func ServeKept(ln *net.UnixListener, opts KeepOptions) error {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	signal.Ignore(syscall.SIGPIPE, syscall.SIGHUP, syscall.SIGINT)
	if err := becomeSubreaper(); err != nil {
		log.Debug("no sub-reaper", "err", err)
	}
	k := &keptState{opts: opts, ln: ln, exit: make(chan struct{}), finished: make(chan struct{})}
	g := &guard{log: log, servers: map[int]*server{}, kept: k}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	go g.accept()
	// Until the first shim attaches, the window runs as if one had left.
	g.mu.Lock()
	g.startWindow()
	g.mu.Unlock()
	select {
	case <-k.exit:
	case <-term:
		log.Debug("SIGTERM: stopping the kept server")
	}
	g.shutdown("stopped")
	close(k.finished)
	answered := make(chan struct{})
	go func() { k.stoppers.Wait(); close(answered) }()
	select {
	case <-answered:
	case <-time.After(2 * time.Second):
	}
	return nil
}

// accept serves connections until the listener is closed.
func (g *guard) accept() {
	k := g.kept
	for {
		uc, err := k.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go g.hello(uc)
	}
}

// hello checks who connected and what it wants.
func (g *guard) hello(uc *net.UnixConn) {
	k := g.kept
	if uid, err := peerUID(uc); err != nil || uid != os.Getuid() {
		g.log.Warn("refused a connection from another user", "uid", uid, "err", err)
		uc.Close()
		return
	}
	c := newCtrl(uc)
	_ = uc.SetReadDeadline(time.Now().Add(5 * time.Second))
	m, fds, err := c.recv()
	closeFDs(fds)
	_ = uc.SetReadDeadline(time.Time{})
	if err != nil {
		c.close()
		return
	}
	switch {
	case m.Op == "stop":
		k.stoppers.Add(1)
		defer k.stoppers.Done()
		g.mu.Lock()
		k.lastWhy = "stopped by mcp-heal stop"
		g.mu.Unlock()
		k.once.Do(func() { close(k.exit) })
		<-k.finished
		_ = c.send(msg{Ev: "stopped"})
		c.close()
	case m.Op == "attach" && m.Identity == k.opts.Identity:
		g.attach(c)
	default:
		_ = c.send(msg{Ev: "error", Err: "not this server"})
		c.close()
	}
}

// keptStart starts the kept server (the first one, or after it died).
func (g *guard) keptStart(m msg) {
	k := g.kept
	select {
	case <-k.exit:
		// Stopping (mcp-heal stop, the window): the shim's respawn must
		// not start a server that nothing would stop.
		_ = g.send(msg{Ev: "error", ID: m.ID, Err: "the kept server is being stopped"})
		return
	default:
	}
	srv, files := g.start(m)
	if srv == nil {
		return
	}
	srv.files = files
	g.mu.Lock()
	old := k.srv
	g.servers[m.ID] = srv
	k.srv, k.srvID = srv, m.ID
	if k.opts.Hooks.Started != nil {
		k.opts.Hooks.Started()
	}
	g.wg.Add(1)
	g.changed()
	g.mu.Unlock()
	if old != nil {
		old.closeFiles()
		go old.stop()
	}
	if err := g.send(msg{Ev: "started", ID: m.ID, PID: srv.pid, Started: srv.started.UnixNano()}, files...); err != nil {
		g.log.Debug("hand over the server's stdio", "err", err)
	}
	go g.watch(m.ID, srv)
}

// keptExited: the kept server ended.
func (g *guard) keptExited(srv *server, st Status) {
	k := g.kept
	srv.closeFiles()
	g.mu.Lock()
	defer g.mu.Unlock()
	if k.srv != srv {
		return
	}
	k.srv = nil
	if k.drain != nil {
		k.drain.stop()
		k.drain = nil
	}
	stopping := false
	select {
	case <-k.exit:
		stopping = true // lastWhy already says why
	default:
	}
	switch {
	case stopping:
	case st.Signal != 0:
		k.lastWhy = fmt.Sprintf("the server was killed by signal %d", st.Signal)
	case st.Exited:
		k.lastWhy = fmt.Sprintf("the server exited with code %d", st.Code)
	default:
		k.lastWhy = "the server ended"
	}
	if n := st.DaemonNote(); n != "" && !stopping {
		k.lastWhy += "; " + n
	}
	if g.c == nil {
		// It died while nobody was attached: nothing left to keep.
		k.once.Do(func() { close(k.exit) })
	}
	g.changed()
}

// keptOp records what the attached shim says: that it is writing a line
// to the server's stdin, or (for the keeper) about the session.
func (g *guard) keptOp(m msg) {
	k := g.kept
	switch m.Op {
	case "writing":
		g.mu.Lock()
		k.midWrite = 0
		if m.Open {
			k.midWrite = m.ID
		}
		g.mu.Unlock()
	case "note":
		if k.opts.Hooks.Note != nil {
			k.opts.Hooks.Note(m.raw)
		}
	}
}

// shutdown stops the kept server with the ladder (its stdin closed first)
// and everything it left, and stops listening.
func (g *guard) shutdown(why string) {
	k := g.kept
	k.ln.Close()
	g.mu.Lock()
	srv := k.srv
	if k.drain != nil {
		k.drain.stop()
		k.drain = nil
	}
	if k.timer != nil {
		k.timer.Stop()
	}
	c := g.c
	g.mu.Unlock()
	g.log.Debug("kept server stopping", "why", k.lastWhy)
	if srv != nil {
		srv.closeFiles()
	}
	// Every server still running (the kept one, and any a shim started
	// meanwhile) is stopped with the ladder; then their trees are gone.
	g.stopAll()
	if c != nil {
		c.close()
	}
	g.mu.Lock()
	k.srv = nil
	if k.opts.OnChange != nil {
		k.opts.OnChange(KeptInfo{Stopped: true, LastExitReason: why + ": " + k.lastWhy})
	}
	g.mu.Unlock()
}
