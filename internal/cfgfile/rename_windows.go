package cfgfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// checkedRename is the compare-and-swap on Windows, which has no atomic
// exchange and, with classic semantics, renames nothing over a file that
// is open. Reading the file, comparing and then renaming over it lost a
// write that another program (write-file-atomic, as Claude Code and
// editors save: write a temporary file, rename it over) renamed in
// between: 1 to 5 of ~200 in 10 of 12 runs of TestCommitConcurrentWriter
// under Wine. So the file is held open for the compare (holdAndRename),
// which makes every other rename over it fail meanwhile (write-file-atomic
// retries), and mcp-heal's own rename follows at once. While another
// program holds the file open (Claude Code reading it, an indexer, a virus
// scanner) the whole is tried again for up to busyWait.
func checkedRename(name, target string, old []byte) error {
	var err error
	for deadline := time.Now().Add(busyWait); ; time.Sleep(10 * time.Millisecond) {
		err = holdAndRename(name, target, old)
		if !busy(err) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// holdAndRename opens target shared for reading and deletion only (so
// nobody writes it meanwhile, and a classic rename over it fails),
// compares it with old through that handle, and renames name over it.
// First with POSIX semantics (Windows 10 1709 and later, NTFS), which
// replaces a file that is open shared for deletion: the handle stays open
// across the rename, and no other write can land between the compare and
// the rename. Where that is refused (older Windows, other file systems;
// Wine 8 answers "Invalid function", so only this fallback is tested
// there), the handle is closed and name renamed over target at once: a
// write landing in the microseconds between the two is lost; the lock
// (lock.go) keeps Claude Code's locked saves out of it.
func holdAndRename(name, target string, old []byte) error {
	// The new version is opened first, so that nothing but one call
	// separates closing target and renaming over it.
	np, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return err
	}
	nh, err := windows.CreateFile(np, windows.DELETE|windows.SYNCHRONIZE, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer windows.CloseHandle(nh)
	p, err := windows.UTF16PtrFromString(target)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: target, Err: err}
	}
	f := os.NewFile(uintptr(h), target)
	defer f.Close()
	cur, err := io.ReadAll(io.LimitReader(f, regfile.MaxConfigBytes+1))
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, old) {
		return ErrChanged
	}
	if renameByHandle(nh, target, posixRenameFlags) == nil {
		return nil
	}
	// Whatever refused it, the classic rename says what is wrong.
	classicSwaps.Add(1)
	f.Close()
	return renameByHandle(nh, target, windows.FILE_RENAME_REPLACE_IF_EXISTS)
}

// renameByHandle is renameHandle, except in tests (a rename that fails).
var renameByHandle = renameHandle

// posixRenameFlags ask to replace a file that is open shared for
// deletion.
const posixRenameFlags = windows.FILE_RENAME_REPLACE_IF_EXISTS | windows.FILE_RENAME_POSIX_SEMANTICS

// renameHandle renames the file open as h (with DELETE access) to the
// path to, with flags: FileRenameInformationEx when they ask for POSIX
// semantics (Wine 8 answers "Invalid function"), else the classic
// FileRenameInformation. The path goes in its NT form.
func renameHandle(h windows.Handle, to string, flags uint32) error {
	abs, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(abs, `\\?\`):
		abs = `\??\` + abs[4:]
	case strings.HasPrefix(abs, `\\`):
		abs = `\??\UNC\` + abs[2:]
	default:
		abs = `\??\` + abs
	}
	n, err := windows.UTF16FromString(abs)
	if err != nil {
		return err
	}
	n = n[:len(n)-1]
	type renameInfo struct {
		Flags          uint32
		RootDirectory  windows.Handle
		FileNameLength uint32
		FileName       [1]uint16
	}
	size := int(unsafe.Offsetof(renameInfo{}.FileName)) + 2*len(n)
	buf := make([]byte, max(size, int(unsafe.Sizeof(renameInfo{}))))
	ri := (*renameInfo)(unsafe.Pointer(&buf[0]))
	ri.Flags = flags
	ri.FileNameLength = uint32(2 * len(n))
	copy(unsafe.Slice(&ri.FileName[0], len(n)), n)
	class := uint32(windows.FileRenameInformation)
	if flags&windows.FILE_RENAME_POSIX_SEMANTICS != 0 {
		class = 65 // FileRenameInformationEx
	}
	var iosb windows.IO_STATUS_BLOCK
	err = windows.NtSetInformationFile(h, &iosb, &buf[0], uint32(len(buf)), class)
	if st, ok := err.(windows.NTStatus); ok {
		return &os.LinkError{Op: "rename", Old: "(open file)", New: to, Err: st.Errno()}
	}
	return err
}
