package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// ErrSymlink means a file or directory in the state dir is a symbolic link.
// mcp-heal never follows one there: a link planted in place of a log would
// have it append to, and chmod, whatever the link points at.
var ErrSymlink = errors.New("is a symbolic link, which mcp-heal does not follow in its state directory; remove it")

// OpenFile is the one way mcp-heal opens a file in its state dir, to read
// or to write: path with flag (os.O_* values), created 0600 if flag says
// so. It refuses a symbolic link (O_NOFOLLOW; on Windows, see openState)
// and anything but a regular file, and tightens the mode of the file it
// opened to 0600 through the descriptor, never through the path.
//
// The open itself never blocks: a FIFO planted in the state dir would
// hold an O_RDONLY open until a writer came (a hook past Claude Code's
// timeout); regfile.Open opens it O_NONBLOCK and refuses it by fstat
// before anything reads it.
//
// A reader of a file someone else may have written bounds what it reads:
// ReadFile for a whole file, io.LimitReader over the *os.File otherwise.
func OpenFile(path string, flag int) (*os.File, error) {
	f, err := openState(path, flag)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("%s %w", path, ErrSymlink)
		}
		return nil, err
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		st, err := f.Stat()
		if err == nil && st.Mode().Perm() != 0o600 {
			err = f.Chmod(0o600)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// MaxRecordBytes bounds a shim record (shims/<pid>.json) a reader accepts:
// a record holds a command line and 20 stderr lines of at most 512 bytes,
// a few KiB; anything over 1 MiB was not written by a shim.
const MaxRecordBytes = 1 << 20

// ErrTooLarge means a file in the state dir is larger than its reader
// accepts; nothing of it was used.
var ErrTooLarge = regfile.ErrTooLarge

// ReadFile reads the whole file at path in the state dir through OpenFile
// (no symbolic link, regular files only, never blocking), refusing one
// over limit bytes with ErrTooLarge after reading at most limit+1 bytes: a
// link to /dev/zero is refused, a huge planted file costs at most limit.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return regfile.ReadAll(f, path, limit)
}

// isLoop reports whether err is what opening a symbolic link with
// O_NOFOLLOW returns: ELOOP on Linux and macOS (open(2)), EMLINK on the
// BSDs.
func isLoop(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}

// EnsureDir creates dir (and parents) with mode 0700 and tightens an
// existing dir to 0700. It refuses a dir that is a symbolic link: chmod
// would follow it.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", dir, ErrSymlink)
	}
	if st.Mode().Perm() == 0o700 {
		return nil
	}
	return os.Chmod(dir, 0o700)
}
