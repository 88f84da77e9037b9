package shim

import (
	"bufio"
	"bytes"
	"io"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// outWriter writes lines to the client; a caller that knows more lines
// follow at once may leave them buffered (flush false). While a long line
// is passed on as it comes (begin, part, end: stream.go), lines written
// by others are held and follow it, so that none lands inside it and no
// writer waits on the server's pace.
type outWriter struct {
	mu      sync.Mutex
	bw      *bufio.Writer
	passing bool
	held    [][]byte
}

func newOutWriter(w io.Writer) *outWriter {
	return &outWriter{bw: bufio.NewWriterSize(w, 64<<10)}
}

func (w *outWriter) write(line []byte, flush bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.passing {
		w.held = append(w.held, bytes.Clone(line))
		return nil
	}
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
	if w.passing {
		return nil // end flushes
	}
	return w.bw.Flush()
}

// begin starts passing a long line on.
func (w *outWriter) begin() {
	w.mu.Lock()
	w.passing = true
	w.mu.Unlock()
}

// part writes the next part of the line being passed on, at once.
func (w *outWriter) part(p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.bw.Write(p); err != nil {
		return err
	}
	return w.bw.Flush()
}

// end ends the line being passed on (with a line end when nl), then
// writes the lines held meanwhile.
func (w *outWriter) end(nl bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.passing = false
	if nl {
		w.bw.WriteByte('\n')
	}
	for _, l := range w.held {
		w.bw.Write(l)
		w.bw.WriteByte('\n')
	}
	w.held = nil
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
