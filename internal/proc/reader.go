package proc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/rawio"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// serveChoice is how the stdout reader delivers: over Recv, or to the
// function given to Serve in its own goroutine. The first of Recv and
// Serve chooses; the reader delivers nothing before (or before the child
// exited, when nobody chose: then over Recv), so no line can be delivered
// both ways out of order.
type serveChoice struct {
	once   sync.Once
	chosen chan struct{}
	handle upstream.Handler
}

func (c *serveChoice) choose(handle upstream.Handler) bool {
	won := false
	c.once.Do(func() {
		c.handle, won = handle, true
		close(c.chosen)
	})
	return won
}

// Serve hands each line the child writes to handle, in order, in the
// goroutine that read it (more: the next line is already read and follows
// at once), instead of over Recv: a relay then routes a message with no
// hand-off between goroutines, as a byte relay would. It returns once the
// child is gone and every line was handled (Done is closed). It must be
// called instead of Recv, before it, and at most once; otherwise it
// returns false at once and the lines come over Recv.
func (p *Process) Serve(handle upstream.Handler) bool {
	if !p.serve.choose(handle) {
		return false
	}
	<-p.done
	return true
}

func (p *Process) readStdout(prefix []byte) {
	defer p.readers.Done()
	var handle upstream.Handler
	decided := false
	in := rawio.Reader(p.stdout)
	if len(prefix) > 0 {
		in = io.MultiReader(bytes.NewReader(prefix), in)
	}
	max := p.cfg.MaxMessage
	if max <= 0 {
		max = jsonrpc.DefaultMaxMessage
	}
	r := jsonrpc.NewReaderMax(in, max)
	for {
		// Owned: the message goes on as it was read, with no copy of
		// its own (a copy of each large answer doubled its cost).
		line, err := r.NextOwned()
		if tl, ok := err.(*jsonrpc.TooLongError); ok {
			p.log.Warn("dropped a message from the server over the size ceiling", "pid", p.pid, "bytes", tl.Len, "limit", tl.Limit, "head", redact.String(string(tl.Head[:min(len(tl.Head), 200)])))
			// Hand what the dropped message held back to the system now:
			// the next one would otherwise stack its own on top.
			debug.FreeOSMemory()
			if line, err = jsonrpc.DroppedReply(tl), nil; line == nil {
				continue
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				p.log.Debug("read child stdout", "pid", p.pid, "err", err)
			}
			if errors.Is(err, io.EOF) {
				go p.stdoutClosed()
			}
			return
		}
		if len(line) == 0 {
			continue
		}
		if r.Cut() && jsoncheck.Valid(line) != nil {
			// Its output ended in the middle of a message: the server
			// ended (or closed stdout) while writing it. Nothing of it
			// reached the client; the call it answered is settled with
			// the server's end, as one that got no answer (a message cut
			// while passed on as it came is the shim's: cutShort).
			p.log.Warn("the server's output ended in the middle of a message; dropped it", "pid", p.pid, "bytes", len(line), "head", redact.String(string(line[:min(len(line), 200)])))
			continue
		}
		// Every line goes to the shim as it is: whether it is JSON-RPC,
		// and what happens to one that is not, is the shim's
		// (fromUpstream, shim/pump.go).
		if !decided {
			// Only delivering waits for the choice: reading goes on, so
			// a closed stdout is seen whoever reads the lines.
			select {
			case <-p.serve.chosen:
			case <-p.exited:
				p.serve.choose(nil) // nobody asked: its lines go over Recv
			}
			handle, decided = p.serve.handle, true
			if handle != nil {
				r.Parts = handle.Part
			}
		}
		if handle != nil {
			handle.Line(line, r.HasLine())
			continue
		}
		select {
		case p.recv <- line:
		case <-p.quit:
		}
	}
}
