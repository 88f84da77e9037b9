//go:build linux || darwin

package statusline

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal reports whether f is a terminal (a user typing), not a pipe,
// a file or /dev/null. The descriptor comes through SyscallConn, which
// leaves its blocking mode alone (Fd() would not).
func terminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), getTermios)
		tty = err == nil
	})
	return tty
}
