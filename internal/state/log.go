package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// Log sizes. A log past its size is rotated: "x.log" becomes "x.log.1",
// "x.log.1" becomes "x.log.2", and so on up to Keep files, the oldest
// dropped. So a server's lifecycle log takes at most 4 MiB on disk and its
// traffic log at most 64 MiB.
const (
	MaxLifecycleBytes = 1 << 20
	MaxTrafficBytes   = 16 << 20
	KeepLogs          = 3 // rotated files kept beside the current one
)

// recheckEvery is how often a log checks that another process sharing it
// (two Claude Code sessions running the same server) has not rotated it.
const recheckEvery = time.Second

// LogFile is an append-only log that rotates itself by size. Several
// processes may append to the same log: each Write is one write(2) with
// O_APPEND, so lines do not interleave, and rotation happens under a lock
// file beside the log, after which every writer moves to the new file.
// Safe for concurrent use.
type LogFile struct {
	path   string
	max    int64
	keep   int
	redact bool // pass each line through the one rule (redact.String)

	mu      sync.Mutex
	f       *os.File
	checked time.Time
}

// OpenLog opens server's lifecycle log for appending (0600, dir 0700).
// Every line goes through the one redaction rule: events quote exit
// reasons, errors and stderr.
func OpenLog(server string) (*LogFile, error) {
	l, err := OpenLogFile(LogPath(server), MaxLifecycleBytes, KeepLogs)
	if l != nil {
		l.redact = true
	}
	return l, err
}

// OpenTrafficLog opens server's traffic log for appending. Its writer (the
// shim) redacts each message as it logs it, with the same rule; lines are
// not redacted a second time here, as messages may be large.
func OpenTrafficLog(server string) (*LogFile, error) {
	return OpenLogFile(TrafficLogPath(server), MaxTrafficBytes, KeepLogs)
}

// OpenLogFile opens the log at path, rotated past max bytes keeping keep
// old files. Its directory is created 0700; the file is never a link.
func OpenLogFile(path string, max int64, keep int) (*LogFile, error) {
	if err := EnsureDir(dirOf(path)); err != nil {
		return nil, err
	}
	l := &LogFile{path: path, max: max, keep: keep}
	if err := l.reopen(); err != nil {
		return nil, err
	}
	return l, nil
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			return path[:i]
		}
	}
	return "."
}

func (l *LogFile) reopen() error {
	f, err := OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.checked = f, time.Now()
	return nil
}

// Write appends p (one line) to the log, rotating it first when it has
// grown past its size.
func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	n := len(p)
	if l.redact {
		p = []byte(redact.String(string(p)))
	}
	st, err := l.f.Stat()
	if err == nil && st.Size()+int64(len(p)) > l.max {
		if err := l.rotate(); err != nil {
			return 0, fmt.Errorf("rotate %s: %w", l.path, err)
		}
	} else if time.Since(l.checked) > recheckEvery {
		l.checked = time.Now()
		if cur, err := os.Lstat(l.path); err != nil || st == nil || !os.SameFile(cur, st) {
			// Another process rotated it: follow.
			if err := l.reopen(); err != nil {
				return 0, err
			}
		}
	}
	if _, err := l.f.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// rotate shifts the files under the lock, unless another writer already
// did (the current file is small again), and reopens.
func (l *LogFile) rotate() error {
	unlock, err := lockPath(l.path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if st, err := os.Lstat(l.path); err == nil && st.Size() <= l.max/2 {
		return l.reopen()
	}
	// Windows renames no file that is open, this writer's own included:
	// close it first (reopen below makes the new one).
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	if l.keep <= 0 {
		_ = os.Remove(l.path)
	}
	for i := l.keep; i >= 1; i-- {
		from := l.path
		if i > 1 {
			from += "." + strconv.Itoa(i-1)
		}
		// rename(2) moves a link, never its target: nothing is followed.
		if err := os.Rename(from, l.path+"."+strconv.Itoa(i)); err != nil && !os.IsNotExist(err) {
			// Still open the log, so that the next line can be written.
			return errors.Join(err, l.reopen())
		}
	}
	return l.reopen()
}

// Close closes the log.
func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// OpenChildLog opens the lifecycle log of server as a plain file that a
// child process writes to directly (its stderr), rotating it first if it
// is past its size. What the child writes is not redacted line by line:
// use it only for debugging output (MCP_HEAL_DEBUG).
func OpenChildLog(server string) (*os.File, error) {
	l, err := OpenLogFile(LogPath(server), MaxLifecycleBytes, KeepLogs)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st, err := l.f.Stat(); err == nil && st.Size() > l.max {
		if err := l.rotate(); err != nil {
			l.f.Close()
			return nil, fmt.Errorf("rotate %s: %w", l.path, err)
		}
	}
	f := l.f
	l.f = nil
	return f, nil
}

// WriteEvent appends one lifecycle line to w (a server's lifecycle log):
// a JSON object with time, event, server and the key-value pairs kv. The
// one format of that log: the shim, the keeper and the guardian write
// through it, and `logs` and keep.Explain read it.
func WriteEvent(w io.Writer, server, ev string, kv ...any) error {
	m := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "event": ev, "server": server}
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok {
			m[k] = kv[i+1]
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
