// Package regfile opens and reads files that someone else may have
// written, such that none of them can hold mcp-heal: the open never
// blocks (a FIFO), anything but a regular file is refused (a device such
// as /dev/zero, a socket, a directory), and a whole-file read is capped.
// The state dir (internal/state) and Claude Code's config files
// (internal/claudecfg) both read through it; they differ only in whether
// a symbolic link is followed.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular means the path names something other than a regular file
// (after following a symbolic link, when the caller follows them).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge means a file is larger than its reader accepts; nothing of
// it was used.
var ErrTooLarge = errors.New("larger than mcp-heal accepts")

// Open opens path with flag (os.O_* values, plus O_NOFOLLOW for a caller
// that refuses links) and perm for a created file, and returns it only if
// the descriptor it opened is a regular file. The check is fstat on that
// descriptor, not a stat of the path, so the file checked is the file
// read.
//
// The open itself never blocks: an O_RDONLY open of a FIFO waits for a
// writer, so the file is opened O_NONBLOCK and refused by fstat before
// anything reads it. On a regular file O_NONBLOCK changes nothing (reads
// and writes of regular files never wait), so it is left set.
//
// On Windows the file is opened shared for deletion, so that holding it
// open never stops another program from replacing it (open_windows.go).
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := openFile(path, flag, perm)
	return check(path, f, err)
}

// check returns f, just opened from path, if it is a regular file.
func check(path string, f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s); mcp-heal refuses to read it", path, ErrNotRegular, st.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadAll reads f (opened from path) to its end, refusing it with
// ErrTooLarge after reading at most limit+1 bytes: a huge file costs at
// most limit.
func ReadAll(f *os.File, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrTooLarge, Size(limit))
	}
	return b, nil
}

// ReadFile reads the whole regular file at path, following a symbolic
// link (a dotfile manager links config files into place), through Open
// and ReadAll.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, limit)
}

// Size writes n bytes the way limits are documented: "16 MiB" when n is
// a whole number of MiB, else "n bytes".
func Size(n int64) string {
	if n > 0 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
