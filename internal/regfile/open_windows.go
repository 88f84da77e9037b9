package regfile

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// openFile opens path as os.OpenFile does, but shared for deletion
// (FILE_SHARE_DELETE, which os.OpenFile never asks for): Windows renames
// and deletes no file that someone holds open without it, so a writer or
// reader holding a log would stop its rotation (renaming it to .1). It
// does not let another file be renamed over one that is open: that fails
// however the file is shared (measured under Wine 8.0), so writers of a
// file others read retry (cfgfile). Windows has no FIFO in its file
// system to wait on.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return OpenShared(path, flag, false)
}

// OpenNoFollow is Open for a caller that refuses symbolic links, as
// O_NOFOLLOW does on unix (internal/state): FILE_FLAG_OPEN_REPARSE_POINT
// opens a link itself rather than its target, and a link (any reparse
// point) is refused with syscall.ELOOP before anything is read, written or
// chmodded. Files are created 0600 (Windows keeps no mode but read-only).
func OpenNoFollow(path string, flag int) (*os.File, error) {
	f, err := OpenShared(path, flag, true)
	return check(path, f, err)
}

// OpenShared is CreateFile for flag (os.O_* values), shared for reading,
// writing and deletion; with noFollow, a reparse point is refused with
// syscall.ELOOP.
func OpenShared(path string, flag int, noFollow bool) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	// A writer may Chmod through the handle, which sets attributes; a
	// reader asks for no more than os.Open does.
	var access uint32 = windows.FILE_READ_ATTRIBUTES
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access |= windows.GENERIC_READ
	case os.O_WRONLY:
		access |= windows.GENERIC_WRITE | windows.FILE_WRITE_ATTRIBUTES
	case os.O_RDWR:
		access |= windows.GENERIC_READ | windows.GENERIC_WRITE | windows.FILE_WRITE_ATTRIBUTES
	}
	if flag&os.O_APPEND != 0 {
		// Append only: every write lands at the end, as with O_APPEND.
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
	// BACKUP_SEMANTICS lets a directory be opened, so that Open refuses
	// it by its type, as on unix.
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL | windows.FILE_FLAG_BACKUP_SEMANTICS)
	if noFollow {
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(name, access, share, nil, create, attrs, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if noFollow {
		var info windows.ByHandleFileInformation
		if err := windows.GetFileInformationByHandle(h, &info); err != nil {
			windows.CloseHandle(h)
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
			windows.CloseHandle(h)
			return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
		}
	}
	return os.NewFile(uintptr(h), path), nil
}
