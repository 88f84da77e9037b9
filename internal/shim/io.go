package shim

import (
	"bufio"
	"io"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// outWriter writes lines to the client; a caller that knows more lines
// follow at once may leave them buffered (flush false).
type outWriter struct {
	mu sync.Mutex
	bw *bufio.Writer
}

func newOutWriter(w io.Writer) *outWriter {
	return &outWriter{bw: bufio.NewWriterSize(w, 64<<10)}
}

func (w *outWriter) write(line []byte, flush bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.bw.Write(line)
	if err := w.bw.WriteByte('\n'); err != nil {
		return err
	}
	if flush {
		return w.bw.Flush()
	}
	return nil
}

func (w *outWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bw.Flush()
}

// laterSender is implemented by upstreams that can buffer a message until
// the next Send or Flush (proc.Process).
type laterSender interface {
	SendLater(msg []byte) error
	Flush() error
}

// sendUp sends line on c; when more client input is already waiting and c
// can buffer, the write is left for the next send or flushUp. Called with
// sendMu held.
func (s *Shim) sendUp(c upstream.Conn, line []byte, more bool) error {
	if ls, ok := c.(laterSender); ok && more {
		s.unflushed = ls
		return ls.SendLater(line)
	}
	if s.unflushed != nil && any(s.unflushed) != any(c) {
		s.unflushed.Flush()
	}
	s.unflushed = nil
	return c.Send(line)
}

// flushUp writes what sendUp left buffered.
func (s *Shim) flushUp() {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.unflushed != nil {
		s.unflushed.Flush()
		s.unflushed = nil
	}
}
