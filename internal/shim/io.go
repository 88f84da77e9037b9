package shim

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// lineReader is jsonrpc.Reader plus Buffered, which tells the client
// reader whether more input is already waiting (so it can batch writes to
// the server). Lines have no size limit.
type lineReader struct {
	br  *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Buffered is the number of bytes read but not yet returned.
func (r *lineReader) Buffered() int { return r.br.Buffered() }

// Next returns the next line without "\n" or "\r\n", valid until the next
// call; a final unterminated line is returned before io.EOF.
func (r *lineReader) Next() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == nil || (errors.Is(err, io.EOF) && len(line) > 0) {
		return trimEOL(line), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	r.buf = append(r.buf[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		r.buf = append(r.buf, line...)
		if err == nil || (errors.Is(err, io.EOF) && len(r.buf) > 0) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
	out := trimEOL(r.buf)
	if cap(r.buf) > 4<<20 {
		r.buf = nil // do not pin a huge buffer after one huge message
	}
	return out, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

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
