package rawio

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// raw is a non-blocking pipe read and written with raw system calls.
type raw struct {
	f  *os.File
	rc syscall.RawConn
}

func newRaw(f *os.File) *raw {
	if f == nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nb := false
	if rc.Control(func(fd uintptr) {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nb = e == 0 && fl&syscall.O_NONBLOCK != 0
	}) != nil || !nb {
		return nil // a blocking pipe would block a raw call with the P held
	}
	return &raw{f: f, rc: rc}
}

func (r *raw) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(m), e
			return e != syscall.EAGAIN
		}
	})
	switch {
	case err != nil:
		return 0, closed("read", r.f, err)
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (r *raw) Write(p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p[done:]))), uintptr(len(p)-done))
			switch e {
			case 0:
				done += int(m)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, closed("write", r.f, err)
	case errno != 0:
		return done, &os.PathError{Op: "write", Path: r.f.Name(), Err: errno}
	}
	return done, nil
}

// closed is the error of a read or write the poller ended: with no
// deadlines set, only closing the file does, which *os.File reports as
// os.ErrClosed (callers test for it).
func closed(op string, f *os.File, err error) error {
	return &os.PathError{Op: op, Path: f.Name(), Err: fmt.Errorf("%w (%v)", os.ErrClosed, err)}
}
