package rawio

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
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
// does os/exec for the files it hands a child. A raw call on a pipe made
// blocking would block its thread with the runtime's processor held (a
// garbage collection waits for it). So a try never depends on the flag:
//   - where the kernel honours RWF_NOWAIT on pipes (Linux 6.5 and later),
//     it reads with preadv2 and writes with pwritev2 and that flag, which
//     make the one call non-blocking whatever O_NONBLOCK says;
//   - elsewhere (or when the kernel refuses the flag) it asks first (fcntl
//     F_GETFL, a raw call that never blocks) and, on a pipe that has
//     become blocking, goes through syscall.Syscall, which tells the
//     runtime the thread may block, as *os.File does. Only a change
//     between the two calls escapes that.
//
// internal/arch keeps the code that holds these pipes from calling Fd()
// on them.
type raw struct {
	f  *os.File
	rc syscall.RawConn

	rp      []byte // the Read in progress
	rn      int
	rerr    syscall.Errno
	riov    unix.Iovec
	rnowait bool // reads use preadv2 with RWF_NOWAIT
	readFn  func(fd uintptr) bool
	wp      []byte // the Write in progress
	wdone   int
	werr    syscall.Errno
	wiov    unix.Iovec
	wnowait bool // writes use pwritev2 with RWF_NOWAIT
	writeFn func(fd uintptr) bool
}

// pipesNowait reports whether this kernel honours RWF_NOWAIT on pipes: 6.4
// set FMODE_NOWAIT on them, and a fix after 6.4-rc1 made pipe_read and
// pipe_write wait only when neither O_NONBLOCK nor IOCB_NOWAIT is set
// (before it, the flag was accepted and a read still waited). An older
// kernel refuses the flag, which the first try then learns too.
var pipesNowait = sync.OnceValue(func() bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var b strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	major, rest, _ := strings.Cut(b.String(), ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(strings.TrimRightFunc(minor, func(r rune) bool { return r < '0' || r > '9' }))
	return err1 == nil && err2 == nil && (ma > 6 || ma == 6 && mi >= 5)
})

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
	r := &raw{f: f, rc: rc, rnowait: pipesNowait(), wnowait: pipesNowait()}
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
		m, e := try(fd, r.rp, &r.riov, &r.rnowait, unix.SYS_PREADV2, syscall.SYS_READ)
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
		m, e := try(fd, rest, &r.wiov, &r.wnowait, unix.SYS_PWRITEV2, syscall.SYS_WRITE)
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

// try is one system call of a read (trap SYS_READ, vtrap SYS_PREADV2)
// or a write (SYS_WRITE, SYS_PWRITEV2) of p on fd: with vtrap and
// RWF_NOWAIT (through iov) while *nowait holds, else with trap, through
// syscall.Syscall when fd's description is blocking (raw's comment says
// why). When the kernel refuses RWF_NOWAIT, *nowait is cleared for good
// and the call is made the other way.
func try(fd uintptr, p []byte, iov *unix.Iovec, nowait *bool, vtrap, trap uintptr) (uintptr, syscall.Errno) {
	if *nowait {
		iov.Base = unsafe.SliceData(p)
		iov.SetLen(len(p))
		m, _, e := syscall.RawSyscall6(vtrap, fd, uintptr(unsafe.Pointer(iov)), 1, ^uintptr(0), ^uintptr(0), unix.RWF_NOWAIT)
		iov.Base = nil
		if !refused(e) {
			return m, e
		}
		*nowait = false
	}
	if blocking(fd) {
		m, _, e := syscall.Syscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		return m, e
	}
	m, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return m, e
}

// blocking reports whether fd's description is in blocking mode now (or
// the kernel would not say): a raw read or write of it could block the
// thread with the runtime's processor held, stalling a garbage collection
// and, with GOMAXPROCS=1, every goroutine.
func blocking(fd uintptr) bool {
	fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	return e != 0 || fl&syscall.O_NONBLOCK == 0
}

// refused reports whether preadv2 or pwritev2 refused RWF_NOWAIT (or is
// missing): the try is made again the other way.
func refused(e syscall.Errno) bool {
	return e == syscall.EOPNOTSUPP || e == syscall.ENOSYS || e == syscall.EINVAL
}

// closed is the error of a read or write the poller ended: with no
// deadlines set, only closing the file does, which *os.File reports as
// os.ErrClosed (callers test for it).
func closed(op string, f *os.File, err error) error {
	return &os.PathError{Op: op, Path: f.Name(), Err: fmt.Errorf("%w (%v)", os.ErrClosed, err)}
}
