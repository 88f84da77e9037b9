package state

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"

	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// openState opens path in the state dir without following a link
// (regfile.OpenNoFollow: a link is refused with ELOOP, which OpenFile
// reports as ErrSymlink) and shared for deletion: Windows renames and
// deletes no file that someone holds open without it, so a log's
// rotation failed while another writer of it had it open ("Sharing
// violation").
func openState(path string, flag int) (*os.File, error) {
	return regfile.OpenNoFollow(path, flag)
}

// lockPath takes an exclusive LockFileEx lock on the lock file path
// (created 0600, never a link) and returns its release. As with flock on
// unix, the lock file itself is never replaced, so every process locks
// the same file: hooks that run in parallel append and trim the incident
// log one at a time.
func lockPath(path string) (unlock func(), err error) {
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	h := windows.Handle(f.Fd())
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = windows.UnlockFileEx(h, 0, 1, 0, ol)
		f.Close()
	}, nil
}
