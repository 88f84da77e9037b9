package bridge

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// ConnRefused reports whether err is a refused connection: nothing
// listens there. On Windows the error is Winsock's WSAECONNREFUSED, which
// syscall.ECONNREFUSED (an invented Errno there) does not match.
func ConnRefused(err error) bool {
	return errors.Is(err, windows.WSAECONNREFUSED) || errors.Is(err, syscall.ECONNREFUSED)
}
