package bridge

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// ErrDead is returned by Send on a connection that is dead or dying; the
// message was not sent (and is not in Exit.Undelivered).
var ErrDead = errors.New("remote session is closed")

// base is what both transports share: the Recv channel, the death of the
// connection (first cause wins), the ids the server refused, and the
// goroutines that must finish before Recv and Done close.
//
// Every goroutine that may deliver a message is an "op" counted in ops;
// death waits for them (up to Options.Grace, then cancels ctx), so Recv
// closes only after everything received before the death was delivered.
type base struct {
	log    *slog.Logger
	red    *redactor
	grace  time.Duration
	start  time.Time
	ctx    context.Context // cancelled on Close or when the grace ends
	cancel context.CancelFunc

	recv   chan []byte
	done   chan struct{}
	closed chan struct{} // Close was called: drop what nobody will read

	junk atomic.Int64 // SSE events dropped for not being JSON

	mu          sync.Mutex
	dying       bool
	exit        upstream.Exit
	undelivered [][]byte
	ops         sync.WaitGroup
	closeOnce   sync.Once
	// onDie runs once, at the first death, before waiting for the ops:
	// it stops what would otherwise run until the grace ends (the
	// standalone GET stream).
	onDie func()
}

// init prepares b; ctx is the connection's lifetime, cancel ends it.
func (b *base) init(log *slog.Logger, red *redactor, grace time.Duration, ctx context.Context, cancel context.CancelFunc) {
	b.log, b.red, b.grace, b.start = log, red, grace, time.Now()
	b.ctx, b.cancel = ctx, cancel
	b.recv = make(chan []byte, 256)
	b.done = make(chan struct{})
	b.closed = make(chan struct{})
}

func (b *base) Recv() <-chan []byte   { return b.recv }
func (b *base) Done() <-chan struct{} { return b.done }
func (b *base) PID() int              { return 0 }
func (b *base) Exit() upstream.Exit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.exit
}

// begin registers an op; false means the connection is dying.
func (b *base) begin() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dying {
		return false
	}
	b.ops.Add(1)
	return true
}

func (b *base) isDying() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dying
}

// deliver hands one server message to Recv.
func (b *base) deliver(msg []byte) {
	select {
	case b.recv <- msg:
	case <-b.closed:
	}
}

// junkEvent logs an SSE event dropped for not being JSON: the first ten,
// then one in a thousand, so that a server cannot flood the log (which
// Claude Code keeps) at will.
func (b *base) junkEvent(size int) {
	if n := b.junk.Add(1); n <= 10 || n%1000 == 0 {
		b.log.Warn("dropped an SSE event that is not JSON", "bytes", size, "dropped_so_far", n)
	}
}

// dropped logs a server message discarded for its size and returns what
// to deliver in its place (jsonrpc.DroppedReply: an error to the request
// it answered, when the head shows one), or nil.
func (b *base) dropped(tl *jsonrpc.TooLongError) []byte {
	reply := jsonrpc.DroppedReply(tl)
	m := jsonrpc.PeekHead(tl.Head)
	b.log.Warn("dropped a message from the server over the size ceiling", "bytes", tl.Len, "limit", tl.Limit, "kind", m.Kind.String(), "id", string(m.ID), "method", m.Method)
	freeMemory()
	return reply
}

// message is what one SSE event gives the client: the JSON-RPC message of
// a "message" event (named so or unnamed), the reply standing for one
// dropped for its size, or nil (another event type, a priming or keep-alive
// event, data that is not JSON, which is logged). Both transports' streams
// go through it.
func (b *base) message(ev event) []byte {
	if ev.Dropped != nil {
		return b.dropped(ev.Dropped)
	}
	if len(ev.Data) == 0 || (ev.Name != "" && ev.Name != "message") {
		return nil
	}
	msg := oneLine(ev.Data)
	if jsoncheck.Valid(msg) != nil {
		b.junkEvent(len(msg))
		return nil
	}
	return msg
}

// freeMemory hands the memory of a dropped message back to the system at
// once: the runtime would keep it for a while, and the next huge message
// would stack its own on top (a rare event, so the forced collection is
// cheap).
func freeMemory() { debug.FreeOSMemory() }

// die records why the connection ended (the first reason wins) and the
// raw id of a request the server is known not to have processed, if any.
// The first call starts the shutdown.
func (b *base) die(reason string, refused []byte) {
	reason = b.red.String(reason)
	b.mu.Lock()
	if refused != nil {
		b.undelivered = append(b.undelivered, bytes.Clone(refused))
	}
	if b.dying {
		b.mu.Unlock()
		return
	}
	b.dying = true
	b.exit.Reason = reason
	b.exit.At = time.Now().UTC()
	b.exit.UptimeMS = time.Since(b.start).Milliseconds()
	b.mu.Unlock()
	b.log.Info("remote session ended", "reason", reason)
	if b.onDie != nil {
		b.onDie()
	}
	go b.finish()
}

// finish waits for the ops (cancelling them after the grace period), then
// fixes Exit and closes Recv and Done.
func (b *base) finish() {
	waited := make(chan struct{})
	go func() { b.ops.Wait(); close(waited) }()
	t := time.NewTimer(b.grace)
	select {
	case <-waited:
	case <-t.C:
		b.cancel()
		<-waited
	}
	t.Stop()
	b.cancel()
	b.mu.Lock()
	b.exit.Undelivered = b.undelivered
	b.mu.Unlock()
	close(b.recv)
	close(b.done)
}

// shutdown is Close's common part: mark the death (if nothing else killed
// the connection first), drop undelivered messages, cancel everything and
// wait.
func (b *base) shutdown(before func()) error {
	b.closeOnce.Do(func() {
		if before != nil {
			before()
		}
		b.die("closed by the client", nil)
		close(b.closed)
		b.cancel()
	})
	<-b.done
	return nil
}
