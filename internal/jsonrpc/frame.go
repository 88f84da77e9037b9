package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxMessage is the default ceiling on one forwarded message:
// 16 MiB less 64 KiB (16,711,680 bytes), the longest message Claude Code
// takes. Claude Code (2.1.328 and 2.1.332, measured: docs/claude-code-
// behaviour.md) closes the connection to a stdio server that sends 16 MiB
// (16,777,216 bytes) without a line end, counting what it has not parsed
// yet, and each read of the pipe brings up to 64 KiB, which may include
// the start of the next message. A longer answer therefore fails its one
// call with a clear error here instead of losing the server (and each call
// in flight on it). The shim's --max-message changes it.
const DefaultMaxMessage = 16<<20 - 64<<10

// headSize is how much of an overlong line a TooLongError keeps: enough to
// read the members every SDK writes first (jsonrpc, id, method).
const headSize = 4 << 10

// Reader reads newline-delimited messages.
//
// The MCP stdio transport says messages are delimited by newlines and MUST
// NOT contain embedded newlines; it sets no size limit, and real tool results
// (base64 images) exceed bufio.Scanner's 64 KiB default, so Reader grows its
// buffer as needed, up to a ceiling: a longer line is read and discarded as
// it streams (never held whole) and Next returns a *TooLongError for it; the
// Reader stays usable for the lines that follow.
type Reader struct {
	br     *bufio.Reader
	buf    []byte // the last long line, joined
	joined bool   // the line last returned is buf
	max    int

	// Parts, when set, is offered each part of a line longer than the
	// read buffer (64 KiB) as it arrives, before the line is whole, so
	// that a relay can pass a big message on while it is still coming (a
	// relay that waits for the end sends nothing until the server is
	// done: issue 25). first marks a line's first part, last its end:
	// the last part holds the line end as read ("\n", "\r\n", or none
	// at the end of the input), or is nil when the line went over the
	// ceiling (its parts stop there; Next then returns the
	// *TooLongError). What Parts returns for the first part says whether
	// the whole line still comes from Next as well (keep); when not, the
	// line is not gathered, and Next returns an empty line for it. A
	// part is valid only during the call.
	Parts func(part []byte, first, last bool) (keep bool)

	cut bool // the line last returned ended with the input, with no line end
}

// Cut reports whether the line last returned ended with the input rather
// than with a line end: the writer may have stopped in the middle of it
// (a server killed mid-answer).
func (r *Reader) Cut() bool { return r.cut }

// NewReader returns a Reader that reads from r with no ceiling on line
// length. Use NewReaderMax for anything that reads another process's output.
func NewReader(r io.Reader) *Reader {
	return NewReaderMax(r, 0)
}

// NewReaderMax returns a Reader whose lines may be at most max bytes (not
// counting the line end); max <= 0 means no ceiling.
func NewReaderMax(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// TooLongError reports a line longer than the Reader's ceiling. The line
// was consumed and discarded.
type TooLongError struct {
	Len   int64  // the line's length in bytes (without its line end)
	Limit int    // the ceiling it exceeded
	Head  []byte // its first bytes (at most 4 KiB), for a peek at id and method
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("a line of %d bytes exceeds the ceiling of %d bytes; it was discarded", e.Len, e.Limit)
}

// Next returns the next line without its trailing "\n" or "\r\n". The slice
// is only valid until the next call to Next. A final line without a newline
// is returned before io.EOF. Empty lines are returned as empty slices;
// callers decide whether to skip them. A line over the ceiling yields a
// *TooLongError (and no line); the next call reads the line after it.
func (r *Reader) Next() ([]byte, error) {
	return r.NextMax(nil)
}

// NextOwned is Next, but the line is the caller's to keep (Own).
func (r *Reader) NextOwned() ([]byte, error) {
	line, err := r.NextMax(nil)
	if err != nil {
		return nil, err
	}
	return r.Own(line), nil
}

// Own returns b, which must be a part of the line last returned, as the
// caller's to keep: a long line is handed over as it was joined (once), a
// short one copied out of the read buffer. A relay that keeps each message
// saves one copy of every large one.
func (r *Reader) Own(b []byte) []byte {
	if r.joined {
		r.buf, r.joined = nil, false
		return b
	}
	return bytes.Clone(b)
}

// NextMax is Next with a ceiling chosen per line: limit, when non-nil, gets
// the line's first bytes (up to 64 KiB, or the whole line when shorter;
// always including a short field name such as an SSE "data:") and returns
// the ceiling for that line (<= 0: no ceiling). A nil limit uses the
// Reader's own ceiling.
func (r *Reader) NextMax(limit func(first []byte) int) ([]byte, error) {
	r.joined, r.cut = false, false
	line, err := r.br.ReadSlice('\n')
	max := r.max
	if limit != nil {
		max = limit(line)
	}
	if err == nil || (len(line) > 0 && errors.Is(err, io.EOF)) {
		r.cut = err != nil
		out := trimEOL(line)
		if max > 0 && len(out) > max {
			return nil, &TooLongError{Len: int64(len(out)), Limit: max, Head: bytes.Clone(out[:min(len(out), headSize, max)])}
		}
		return out, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	// Long line: gather it in chunks up to the ceiling, then join them
	// once. Growing one buffer by doubling held the old and the new buffer
	// at once, and the garbage of the smaller ones: a 1 GB line against a
	// 256 MiB ceiling took 650 MiB (issue 16). Past the ceiling only the
	// head is kept and the rest is discarded as it arrives.
	var c Chunks
	c.Write(line)
	total := int64(len(line))
	var head []byte
	over := false
	prev := line[len(line)-1] // the byte before this chunk, for "\r\n"
	cr := false
	var n int64      // the line's length without its line end, once read
	started := false // a part was offered
	keep := true     // the line is gathered for Next
	part := func(p []byte, last bool) {
		if r.Parts != nil {
			if k := r.Parts(p, !started, last); !started {
				keep = k
			}
			started = true
		}
	}
	if max <= 0 || total <= int64(max) {
		part(line, false)
	}
	for {
		line, err = r.br.ReadSlice('\n')
		total += int64(len(line))
		cr = len(line) >= 2 && line[len(line)-2] == '\r' || len(line) == 1 && prev == '\r'
		if len(line) > 0 {
			prev = line[len(line)-1]
		}
		end := err == nil || errors.Is(err, io.EOF) && total > 0
		if !end && !errors.Is(err, bufio.ErrBufferFull) {
			if started && !over {
				part(nil, true)
			}
			return nil, err
		}
		n = total // the content so far (at the end: without the line end)
		if err == nil {
			n--
			if cr {
				n--
			}
		}
		if !over {
			// +2 while the line goes on: its line end is not content.
			if max > 0 && (end && n > int64(max) || total > int64(max)+2) {
				over = true
				head = c.Head(min(headSize, max))
				c.Reset()
				if started {
					part(nil, true)
				}
			} else {
				if keep {
					c.Write(line)
				}
				part(line, end)
			}
		}
		if end {
			r.cut = err != nil
			break
		}
	}
	if over {
		return nil, &TooLongError{Len: n, Limit: max, Head: trimEOL(head)}
	}
	if !keep {
		return nil, nil // the parts were the line
	}
	// Reuse a small buffer; never pin a huge one after one huge message.
	if cap(r.buf) > 4<<20 || cap(r.buf) < c.Len() {
		r.buf = nil
	}
	r.buf = c.AppendTo(r.buf[:0])
	r.joined = true
	return trimEOL(r.buf), nil
}

// Chunks gathers a message of unknown length without copying what it has
// as it grows (each chunk is filled, then a new, larger one started, up to
// 4 MiB). Holding a message costs its length plus at most one chunk.
type Chunks struct {
	cs  [][]byte
	len int
}

// Write appends p; it never fails.
func (c *Chunks) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := copy(c.Spare(1), p)
		c.Commit(k)
		p = p[k:]
	}
	return n, nil
}

// Spare is the free space of the last chunk, at least atLeast bytes (a new
// chunk is started when needed), for reading into directly; Commit then
// counts what was read into it.
func (c *Chunks) Spare(atLeast int) []byte {
	last := len(c.cs) - 1
	if last < 0 || cap(c.cs[last])-len(c.cs[last]) < atLeast {
		size := 64 << 10
		if last >= 0 {
			size = min(2*cap(c.cs[last]), 4<<20)
		}
		c.cs = append(c.cs, make([]byte, 0, max(size, atLeast)))
		last++
	}
	return c.cs[last][len(c.cs[last]):cap(c.cs[last])]
}

// Commit counts n bytes read into what Spare returned.
func (c *Chunks) Commit(n int) {
	last := len(c.cs) - 1
	c.cs[last] = c.cs[last][:len(c.cs[last])+n]
	c.len += n
}

// Len is the number of bytes held.
func (c *Chunks) Len() int { return c.len }

// Head is a copy of the first n bytes (fewer when shorter).
func (c *Chunks) Head(n int) []byte {
	var h []byte
	for _, b := range c.cs {
		if len(h) >= n {
			break
		}
		h = append(h, b[:min(len(b), n-len(h))]...)
	}
	return h
}

// Reset drops what is held.
func (c *Chunks) Reset() { *c = Chunks{} }

// AppendTo appends the message to dst (allocating it whole, once, when
// it has no room) and drops the chunks.
func (c *Chunks) AppendTo(dst []byte) []byte {
	if cap(dst)-len(dst) < c.len {
		dst = append(make([]byte, 0, len(dst)+c.len), dst...)
	}
	for _, b := range c.cs {
		dst = append(dst, b...)
	}
	c.Reset()
	return dst
}

// HasLine reports whether a whole line is read and waiting: the next Next
// returns it without reading, so a relay may leave its last write
// unflushed (never when only part of a line is there: that read may block).
func (r *Reader) HasLine() bool {
	b, _ := r.br.Peek(r.br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
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
