package bridge

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// event is one server-sent event (WHATWG HTML, "Server-sent events",
// §9.2.6 Interpreting an event stream).
type event struct {
	// ID is the event's id field; HasID says one was present (an empty id
	// resets the last event id).
	ID    string
	HasID bool
	// Name is the event type ("" means "message").
	Name string
	// Data is the data lines joined with "\n".
	Data []byte
	// Retry is the reconnection time the server asked for, or 0.
	Retry time.Duration
	// Dropped is set (and Data empty) when the data was over the message
	// ceiling and was discarded.
	Dropped *jsonrpc.TooLongError
}

// maxField is the ceiling on an SSE line that is not data (event, id,
// retry, comments): no real one comes near it, and an id is sent back as
// a header.
const maxField = 4 << 10

// maxRetry caps the reconnection delay a server may ask for with retry:
// (up to 49 days in 32 bits): a call whose stream the server closed must
// not wait longer than this to resume.
const maxRetry = time.Minute

// sseReader reads events from a text/event-stream body. The data of one
// event may be as long as the message ceiling (a tool result carrying an
// image arrives as one data line); past it the data is discarded as it
// streams and the event comes back with Dropped set. Other lines are capped
// at maxField and ignored past it.
type sseReader struct {
	lr  *jsonrpc.Reader
	max int
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{lr: jsonrpc.NewReader(r), max: max}
}

// Next returns the next dispatched event. Events without data are returned
// too (a priming event carries only an id and retry, SEP-1699), so the
// caller can track ids. At the end of the stream it returns io.EOF (an
// event cut off by the end is discarded, as the standard says).
func (s *sseReader) Next() (event, error) {
	var ev event
	// data is owned: a long data line is kept as the reader joined it, and
	// never copied again on its way to the client.
	var data []byte
	var dropped *jsonrpc.TooLongError
	dataLines := 0
	seen := false
	limit := func(first []byte) int {
		if bytes.HasPrefix(first, []byte("data:")) {
			return s.max + len("data: ")
		}
		return maxField
	}
	for {
		line, err := s.lr.NextMax(limit)
		var tl *jsonrpc.TooLongError
		if errors.As(err, &tl) {
			if !bytes.HasPrefix(tl.Head, []byte("data:")) {
				continue // an overlong event name, id or comment: ignored
			}
			seen = true
			if dropped == nil {
				_, head, _ := bytes.Cut(tl.Head, []byte{':'})
				dropped = &jsonrpc.TooLongError{Limit: s.max, Head: bytes.TrimPrefix(head, []byte{' '})}
				if len(data) > 0 {
					dropped.Head = bytes.Clone(data[:min(len(data), 4<<10)])
				}
			}
			dropped.Len += int64(len(data)) + tl.Len
			data = nil
			continue
		}
		if err != nil {
			if err == io.EOF {
				return event{}, io.EOF
			}
			return event{}, err
		}
		if len(line) == 0 {
			if !seen {
				continue
			}
			if dropped != nil {
				ev.Dropped = dropped
			} else {
				ev.Data = data
			}
			return ev, nil
		}
		if line[0] == ':' {
			continue // comment (keep-alive)
		}
		seen = true
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if dropped != nil {
				dropped.Len += int64(len(value)) + 1
				continue
			}
			n := len(value)
			if dataLines > 0 {
				n += len(data) + 1
			}
			if n > s.max {
				// Many data lines, each within the ceiling.
				head := data
				if dataLines == 0 {
					head = value
				}
				dropped = &jsonrpc.TooLongError{Len: int64(n), Limit: s.max, Head: bytes.Clone(head[:min(len(head), 4<<10)])}
				data = nil
				continue
			}
			if dataLines == 0 {
				data = s.lr.Own(value)
			} else {
				data = append(append(data, '\n'), value...)
			}
			dataLines++
		case "id":
			if !bytes.ContainsRune(value, 0) {
				ev.ID, ev.HasID = string(value), true
			}
		case "retry":
			if n, err := strconv.ParseUint(string(value), 10, 32); err == nil {
				ev.Retry = min(time.Duration(n)*time.Millisecond, maxRetry)
			}
		}
	}
}

// oneLine makes a JSON text safe to forward as one stdio line: JSON allows
// raw line breaks only as whitespace between tokens (inside strings they
// must be escaped), so replacing them with spaces keeps it valid and
// equivalent. Pretty-printed responses and multi-line SSE data need this.
// b is changed in place (every caller owns it: a copy of a large message
// cost as much as the message).
func oneLine(b []byte) []byte {
	for _, c := range []byte{'\n', '\r'} {
		for i := bytes.IndexByte(b, c); i >= 0; {
			b[i] = ' '
			j := bytes.IndexByte(b[i+1:], c)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return bytes.TrimSpace(b)
}
