//go:build !windows

package bridge

import (
	"errors"
	"syscall"
)

// ConnRefused reports whether err is a refused connection: nothing
// listens there.
func ConnRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
