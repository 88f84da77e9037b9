package guardian

import (
	"log/slog"
	"os"
	"syscall"
	"time"
)

// Child is not available on Windows.
type Child struct {
	PID                   int
	Started               time.Time
	Stdin, Stdout, Stderr *os.File
}

// Spawn is not supported on Windows.
func Spawn([]string, Spec, *os.File) (*Child, error) { return nil, ErrUnsupported }

// Serve is not supported on Windows.
func Serve(*os.File, *slog.Logger) error { return ErrUnsupported }

// NewCookie is not used on Windows.
func NewCookie() string { return "" }

// Sweep is not supported on Windows.
func Sweep(string, int) []int { return nil }

// Done is never closed.
func (*Child) Done() <-chan struct{} { return nil }

// Status is empty.
func (*Child) Status() Status { return Status{} }

// GuardianPID is 0.
func (*Child) GuardianPID() int { return 0 }

// Signal is not supported.
func (*Child) Signal(syscall.Signal) error { return ErrUnsupported }

// Release does nothing.
func (*Child) Release() {}
