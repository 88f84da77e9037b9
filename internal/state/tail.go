package state

import (
	"bytes"
	"io"
	"os"
	"time"
)

// ReadTail returns the whole lines in the last limit bytes of the JSON-lines
// log at path (the incident log, a lifecycle log): the one way mcp-heal
// reads a log's tail. It opens the file through OpenFile (no symbolic
// link, regular files only), reads at most limit bytes whatever the file's
// size, and drops the line the cut went through. It returns nothing when
// the file was last modified before since (the zero time: always read).
func ReadTail(path string, limit int64, since time.Time) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.ModTime().Before(since) {
		return nil, err
	}
	off := max(st.Size()-limit, 0)
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, off, limit), limit))
	if err != nil {
		return nil, err
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	return b, nil
}
