package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// Reader reads newline-delimited messages of any length.
//
// The MCP stdio transport says messages are delimited by newlines and MUST
// NOT contain embedded newlines; it sets no size limit, and real tool results
// (base64 images) exceed bufio.Scanner's 64 KiB default, so Reader grows its
// buffer as needed instead of capping lines.
type Reader struct {
	br  *bufio.Reader
	buf []byte
}

// NewReader returns a Reader that reads from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next line without its trailing "\n" or "\r\n". The slice
// is only valid until the next call to Next. A final line without a newline
// is returned before io.EOF. Empty lines are returned as empty slices;
// callers decide whether to skip them.
func (r *Reader) Next() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == nil {
		return trimEOL(line), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return trimEOL(line), nil
		}
		return nil, err
	}
	// Long line: accumulate into our own buffer.
	r.buf = append(r.buf[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		r.buf = append(r.buf, line...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(r.buf) > 0 {
			break
		}
		return nil, err
	}
	out := trimEOL(r.buf)
	// Do not pin a huge buffer forever after one huge message.
	if cap(r.buf) > 4<<20 {
		cp := out
		r.buf = nil
		return cp, nil
	}
	return out, nil
}

// Buffered is the number of bytes read from the underlying reader but not
// yet returned: a proxy that sees more input waiting can batch its writes.
func (r *Reader) Buffered() int { return r.br.Buffered() }

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// Writer writes whole lines; it is safe for concurrent use, and each call
// writes one message followed by "\n" atomically with respect to other calls.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	bw *bufio.Writer
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, bw: bufio.NewWriterSize(w, 64<<10)}
}

// WriteLine writes msg and a newline and flushes. msg must not contain a
// newline.
func (w *Writer) WriteLine(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.bw.Write(msg); err != nil {
		return err
	}
	if err := w.bw.WriteByte('\n'); err != nil {
		return err
	}
	return w.bw.Flush()
}
