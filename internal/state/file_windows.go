package state

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"

	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// openState opens path in the state dir the way O_NOFOLLOW does on unix,
// with CreateFile: FILE_FLAG_OPEN_REPARSE_POINT opens a symbolic link
// itself rather than its target, and a link (any reparse point) is then
// refused before anything is read, written or chmodded. Every state file
// is shared for deletion too (FILE_SHARE_DELETE, which os.OpenFile never
// asks for): Windows renames and deletes no file that someone holds open
// without it, so log rotation, the incident log's trim and record
// replacement would fail while another shim, hook or reader had the file
// open ("Sharing violation"); with it they behave as on unix.
func openState(path string, flag int) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32 = windows.FILE_READ_ATTRIBUTES | windows.FILE_WRITE_ATTRIBUTES
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access |= windows.GENERIC_READ
	case os.O_WRONLY:
		access |= windows.GENERIC_WRITE
	case os.O_RDWR:
		access |= windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		// Append only: every write lands at the end, as O_APPEND.
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA
	}
	var create uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
	case flag&(os.O_CREATE|os.O_TRUNC) == os.O_CREATE|os.O_TRUNC:
		create = windows.CREATE_ALWAYS
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	case flag&os.O_TRUNC != 0:
		create = windows.TRUNCATE_EXISTING
	default:
		create = windows.OPEN_EXISTING
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(name, access, share, nil, create,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		windows.CloseHandle(h)
		return nil, fmt.Errorf("%s %w", path, ErrSymlink)
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		windows.CloseHandle(h)
		return nil, fmt.Errorf("%s: %w (a directory); mcp-heal refuses to read it", path, regfile.ErrNotRegular)
	}
	return os.NewFile(uintptr(h), path), nil
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
