//go:build unix

package state

import (
	"os"
	"syscall"

	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// openState opens path with O_NOFOLLOW, which refuses a symbolic link at
// the open itself.
func openState(path string, flag int) (*os.File, error) {
	return regfile.Open(path, flag|syscall.O_NOFOLLOW, 0o600)
}

// lockPath takes an exclusive flock(2) on the lock file path (created 0600,
// never followed if a link) and returns its release. The lock file itself
// is never replaced, so every process locks the same inode, unlike a lock
// on a file that trimming renames over.
func lockPath(path string) (unlock func(), err error) {
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
