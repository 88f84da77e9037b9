//go:build unix

package guardian

// A kept guardian's clients: a shim attaches (it gets the keeper's session
// and the server's stdio), detaches (the keep window starts), and what the
// server writes while nobody is attached is drained (and shown to the
// keeper).

import (
	"fmt"
	"os"
	"time"
)

// attach makes c the shim: it gets the session and, if the server runs,
// its stdio and what was read of its stdout while nobody was attached.
func (g *guard) attach(c *ctrl) {
	k := g.kept
	g.mu.Lock()
	if g.c != nil {
		g.mu.Unlock()
		_ = c.send(msg{Ev: "busy"})
		c.close()
		return
	}
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	var prefix []byte
	if k.drain != nil {
		prefix = k.drain.stop()
		k.drain = nil
	}
	k.epoch++
	g.c = c
	rep := msg{Ev: "attached", Epoch: k.epoch}
	undo := func() {}
	if k.opts.Hooks.Attach != nil {
		rep.Session, undo = k.opts.Hooks.Attach()
	}
	var files []*os.File
	if k.srv != nil {
		rep.ID, rep.PID, rep.Started, rep.Prefix = k.srvID, k.srv.pid, k.srv.started.UnixNano(), prefix
		rep.Spec = &Spec{Cookie: k.srv.spec.Cookie}
		files = k.srv.files
	}
	g.changed()
	g.mu.Unlock()
	if err := c.send(rep, files...); err != nil {
		g.log.Debug("attach", "err", err)
		// The shim never heard it: keep it for the next one.
		undo()
	}
	go func() {
		for {
			m, fds, err := c.recv()
			closeFDs(fds)
			if err != nil {
				break
			}
			g.handle(m)
		}
		g.detach(c)
	}()
}

// detach: the shim went away. The server hears what the keeper says it
// must (its open requests answered with an error: nobody will), its output
// is drained, and the window starts.
func (g *guard) detach(c *ctrl) {
	k := g.kept
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c != c {
		return
	}
	c.close()
	g.c = nil
	if k.srv == nil {
		// Nothing to keep.
		k.lastWhy = "the server was not running when its client went away"
		k.once.Do(func() { close(k.exit) })
		return
	}
	if k.midWrite != 0 && k.midWrite == k.srvID {
		// The shim died in the middle of a write: end the line it
		// started, so that what is written next is read as a line of
		// its own (the server reads one line it cannot parse).
		k.srv.write(nil)
		g.log.Debug("ended a line the shim left unfinished")
	}
	k.midWrite = 0
	if k.opts.Hooks.Detach != nil {
		// What the server must hear now that its client is gone (answers
		// to its requests nobody will answer, cancellations).
		for _, line := range k.opts.Hooks.Detach() {
			k.srv.write(line)
		}
	}
	k.drain = startDrain(k.srv, g.drained)
	g.startWindow()
}

// startWindow starts the keep window. Called with g.mu held.
func (g *guard) startWindow() {
	k := g.kept
	k.since = time.Now()
	k.timer = time.AfterFunc(k.opts.Keep, func() {
		g.mu.Lock()
		attached := g.c != nil
		g.mu.Unlock()
		if !attached {
			k.lastWhy = fmt.Sprintf("nobody attached within %v", k.opts.Keep)
			k.once.Do(func() { close(k.exit) })
		}
	})
	g.changed()
}

// drained hands a line the server wrote while nobody was attached to the
// keeper, and writes back what it answers. It must not take g.mu: attach
// and keptExited stop the drainer (and wait for it) holding g.mu.
func (g *guard) drained(srv *server, line []byte) {
	if h := g.kept.opts.Hooks.Drained; h != nil {
		if reply := h(line); reply != nil {
			srv.write(reply)
		}
	}
}
