//go:build unix

package guardian

import (
	"bytes"
	"os"
	"sync"
	"time"
)

// maxDrainLine bounds what is kept of one line while draining: a longer
// one is skipped to its end (it can only be a response nobody wants).
const maxDrainLine = 1 << 20

// drainer reads a detached server's stdout (line by line, to onLine) and
// stderr (discarded), so that it never blocks on a full pipe while nobody
// is attached.
type drainer struct {
	srv     *server
	wg      sync.WaitGroup
	partial []byte // stdout bytes after the last newline, when stopped
}

func startDrain(srv *server, onLine func(*server, []byte)) *drainer {
	d := &drainer{srv: srv}
	if len(srv.files) < 3 {
		return d
	}
	d.wg.Add(2)
	go func() {
		defer d.wg.Done()
		d.partial = drainLines(srv.files[1], func(l []byte) { onLine(srv, l) })
	}()
	go func() {
		defer d.wg.Done()
		drainLines(srv.files[2], func([]byte) {})
	}()
	return d
}

// stop ends the draining at once and returns the bytes of the line in
// progress, for the next reader.
func (d *drainer) stop() []byte {
	if len(d.srv.files) < 3 {
		return nil
	}
	now := time.Now()
	_ = d.srv.files[1].SetReadDeadline(now)
	_ = d.srv.files[2].SetReadDeadline(now)
	d.wg.Wait()
	_ = d.srv.files[1].SetReadDeadline(time.Time{})
	_ = d.srv.files[2].SetReadDeadline(time.Time{})
	return d.partial
}

// drainLines reads f until an error (the deadline, EOF), calling onLine
// for each complete line, and returns the unfinished line.
func drainLines(f *os.File, onLine func([]byte)) []byte {
	var buf []byte
	skipping := false
	tmp := make([]byte, 32<<10)
	for {
		n, err := f.Read(tmp)
		chunk := tmp[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				if !skipping {
					buf = append(buf, chunk...)
					if len(buf) > maxDrainLine {
						buf, skipping = nil, true
					}
				}
				break
			}
			if !skipping {
				buf = append(buf, chunk[:i]...)
				if len(bytes.TrimSpace(buf)) > 0 {
					onLine(buf)
				}
			}
			buf, skipping = buf[:0], false
			chunk = chunk[i+1:]
		}
		if err != nil {
			if skipping {
				// The next reader must not take the tail of a skipped
				// line for a message: a newline ends it harmlessly.
				return []byte{'\n'}
			}
			return append([]byte(nil), buf...)
		}
	}
}
