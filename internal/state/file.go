package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ErrSymlink means a file or directory in the state dir is a symbolic link.
// mcp-heal never follows one there: a link planted in place of a log would
// have it append to, and chmod, whatever the link points at.
var ErrSymlink = errors.New("is a symbolic link, which mcp-heal does not follow in its state directory; remove it")

// OpenFile opens path in the state dir with flag (os.O_* values), creating
// it 0600 if flag says so. It refuses a symbolic link (O_NOFOLLOW) and
// anything but a regular file, and tightens the mode of the file it opened
// to 0600 through the descriptor, never through the path.
func OpenFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNoFollow, 0o600)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("%s %w", path, ErrSymlink)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s); mcp-heal refuses to use it", path, st.Mode().Type())
	}
	if err == nil && flag&(os.O_WRONLY|os.O_RDWR) != 0 && st.Mode().Perm() != 0o600 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
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
