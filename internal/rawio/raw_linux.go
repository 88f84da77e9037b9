package rawio

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// raw is a non-blocking pipe read and written with raw system calls. A
// call's state lives here, and the functions given to the poller are made
// once, so that a read or write allocates nothing (a closure per call
// moved it and its results to the heap). One Read and one Write may run at
// once, as the shim's readers and writers do; not two Reads.
//
// O_NONBLOCK belongs to the pipe's open file description, which every
// holder shares (a dup, a descriptor passed over a unix socket, another
// process), and any of them may clear it: (*os.File).Fd() does, and so
// does os/exec for the files it hands a child. So every try asks the
// kernel first (fcntl F_GETFL, a raw call that never blocks) and, on a
// pipe that has become blocking, reads or writes through syscall.Syscall,
// which tells the runtime that the thread may block, as *os.File does.
// Only a change between the two calls escapes it; internal/arch keeps the
// code that holds these pipes from calling Fd() on them.
type raw struct {
	f  *os.File
	rc syscall.RawConn

	rp      []byte // the Read in progress
	rn      int
	rerr    syscall.Errno
	readFn  func(fd uintptr) bool
	wp      []byte // the Write in progress
	wdone   int
	werr    syscall.Errno
	writeFn func(fd uintptr) bool
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
	if rc.Control(func(fd uintptr) { nb = !blocking(fd) }) != nil || !nb {
		return nil // a blocking pipe now: *os.File serves it
	}
	r := &raw{f: f, rc: rc}
	r.readFn, r.writeFn = r.read, r.write
	return r
}

func (r *raw) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rp, r.rn, r.rerr = p, 0, 0
	err := r.rc.Read(r.readFn)
	n, errno := r.rn, r.rerr
	r.rp = nil
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

// read is one try of Read: false when the pipe is empty (the poller waits).
func (r *raw) read(fd uintptr) bool {
	for {
		var m uintptr
		var e syscall.Errno
		if blocking(fd) {
			m, _, e = syscall.Syscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.rp))), uintptr(len(r.rp)))
		} else {
			m, _, e = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.rp))), uintptr(len(r.rp)))
		}
		if e == syscall.EINTR {
			continue
		}
		r.rn, r.rerr = int(m), e
		return e != syscall.EAGAIN
	}
}

func (r *raw) Write(p []byte) (int, error) {
	r.wp, r.wdone, r.werr = p, 0, 0
	err := r.rc.Write(r.writeFn)
	done, errno := r.wdone, r.werr
	r.wp = nil
	switch {
	case err != nil:
		return done, closed("write", r.f, err)
	case errno != 0:
		return done, &os.PathError{Op: "write", Path: r.f.Name(), Err: errno}
	}
	return done, nil
}

// write is one try of Write: false when the pipe is full (the poller
// waits).
func (r *raw) write(fd uintptr) bool {
	for r.wdone < len(r.wp) {
		rest := r.wp[r.wdone:]
		var m uintptr
		var e syscall.Errno
		if blocking(fd) {
			m, _, e = syscall.Syscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		} else {
			m, _, e = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
		}
		switch e {
		case 0:
			r.wdone += int(m)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			r.werr = e
			return true
		}
	}
	return true
}

// blocking reports whether fd's description is in blocking mode now (or
// the kernel would not say): a raw read or write of it could block the
// thread with the runtime's processor held, stalling a garbage collection
// and, with GOMAXPROCS=1, every goroutine.
func blocking(fd uintptr) bool {
	fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	return e != 0 || fl&syscall.O_NONBLOCK == 0
}

// closed is the error of a read or write the poller ended: with no
// deadlines set, only closing the file does, which *os.File reports as
// os.ErrClosed (callers test for it).
func closed(op string, f *os.File, err error) error {
	return &os.PathError{Op: op, Path: f.Name(), Err: fmt.Errorf("%w (%v)", os.ErrClosed, err)}
}
