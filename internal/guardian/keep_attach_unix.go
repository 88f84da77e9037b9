//go:build unix

package guardian

// A kept guardian's clients: a shim attaches (it gets the session and the
// server's stdio), detaches (the keep window starts), and what the server
// writes while nobody is attached is drained.

import (
	"fmt"
	"os"
	"slices"
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
	sess := k.sess
	k.changedMu.Lock()
	sess.ListChanged, k.changed = k.changed, nil
	k.changedMu.Unlock()
	// A shim from before ListChanged reads only this.
	sess.CatalogChanged = slices.Contains(sess.ListChanged, "notifications/tools/list_changed")
	rep := msg{Ev: "attached", Epoch: k.epoch, Session: &sess}
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
		// The shim never heard them: keep them for the next one.
		k.changedMu.Lock()
		for _, m := range sess.ListChanged {
			if !slices.Contains(k.changed, m) {
				k.changed = append(k.changed, m)
			}
		}
		k.changedMu.Unlock()
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

// detach: the shim went away. Its open server->client requests are
// answered with an error (nobody will), the server's output is drained, and
// the window starts.
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
		k.srv.write("")
		g.log.Debug("ended a line the shim left unfinished")
	}
	k.midWrite = 0
	for _, id := range k.srvReqs {
		k.srv.reply(id)
	}
	clear(k.srvReqs)
	for _, id := range k.listens {
		k.srv.write(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"the client went away"}}`, id))
	}
	clear(k.listens)
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

// drained handles a line the server wrote while nobody was attached. It
// must not take g.mu (see keptState.changed).
func (g *guard) drained(srv *server, line []byte) {
	switch kind, id, method := peek(line); {
	case kind == kindRequest:
		srv.reply(id) // nobody can answer it
	case kind == kindNotification && IsListChanged(method):
		// A catalog changed: the next client must hear it (it may have
		// cached the list), once whatever the server repeated.
		k := g.kept
		k.changedMu.Lock()
		if !slices.Contains(k.changed, method) {
			k.changed = append(k.changed, method)
		}
		k.changedMu.Unlock()
	}
}
