//go:build unix

package state

import (
	"errors"
	"os"
	"syscall"
)

const oNoFollow = syscall.O_NOFOLLOW

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

// Alive reports whether a process with pid exists (kill(pid, 0); EPERM
// means it exists and belongs to someone else).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
