package guardian

import (
	"log/slog"
	"net"
	"os"
	"syscall"
	"time"
)

// Guardian is not available on Windows.
type Guardian struct{}

// Start is not supported on Windows.
func Start([]string, *os.File) (*Guardian, error) { return nil, ErrUnsupported }

// PID is 0.
func (*Guardian) PID() int { return 0 }

// Dead is never closed.
func (*Guardian) Dead() <-chan struct{} { return nil }

// Close does nothing.
func (*Guardian) Close() {}

// Detach does nothing.
func (*Guardian) Detach() {}

// Run is not supported on Windows.
func (*Guardian) Run(Spec) (*Child, error) { return nil, ErrUnsupported }

// Child is not available on Windows.
type Child struct {
	PID                   int
	Started               time.Time
	Stdin, Stdout, Stderr *os.File
}

// Serve is not supported on Windows.
func Serve(*os.File, *slog.Logger) error { return ErrUnsupported }

// NewCookie is not used on Windows.
func NewCookie() string { return "" }

// Sweep is not supported on Windows.
func Sweep(string, int, time.Time) []int { return nil }

// Done is never closed.
func (*Child) Done() <-chan struct{} { return nil }

// MarkWrite is nil: there are no kept servers.
func (*Child) MarkWrite() func(open bool) { return nil }

// Status is empty.
func (*Child) Status() Status { return Status{} }

// Signal is not supported.
func (*Child) Signal(syscall.Signal) error { return ErrUnsupported }

// Attach is not supported on Windows.
func Attach(string, string) (*Attached, error) { return nil, ErrUnsupported }

// StopKept is not supported on Windows.
func StopKept(string) error { return ErrUnsupported }

// Note is not supported on Windows.
func (*Guardian) Note([]byte) error { return ErrUnsupported }

// StartKept is not supported on Windows.
func StartKept([]string, *net.UnixListener, *os.File) error { return ErrUnsupported }

// ListenerFromFD is not supported on Windows.
func ListenerFromFD(uintptr) (*net.UnixListener, error) { return nil, ErrUnsupported }

// ServeKept is not supported on Windows.
func ServeKept(*net.UnixListener, KeepOptions) error { return ErrUnsupported }
