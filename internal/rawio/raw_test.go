//go:build linux

package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// pipe is a pipe whose ends are non-blocking and polled, as os.Pipe
// makes them.
func pipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// TestRawPipe: bytes cross intact both ways, a write larger than the
// pipe waits for the reader, the end is io.EOF, and a read waiting when
// the file is closed ends with os.ErrClosed, as through *os.File.
func TestRawPipe(t *testing.T) {
	r, w := pipe(t)
	rr, rw := Reader(r), Writer(w)
	if runtime.GOOS == "linux" {
		if _, ok := rr.(*raw); !ok {
			t.Fatalf("a non-blocking pipe's reader is %T, want raw", rr)
		}
	}
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: over the pipe's 64 KiB
	go func() {
		if n, err := rw.Write(msg); n != len(msg) || err != nil {
			t.Errorf("write: %d, %v", n, err)
		}
		w.Close()
	}()
	got, err := io.ReadAll(rr)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("read %d bytes, %v; want the %d written", len(got), err, len(msg))
	}

	r2, _ := pipe(t)
	rr2 := Reader(r2)
	done := make(chan error, 1)
	go func() {
		_, err := rr2.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	r2.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("a read waiting at close: %v, want os.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a read waiting at close did not end")
	}

	r3, w3 := pipe(t)
	r3.Close()
	if _, err := Writer(w3).Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("a write with no reader: %v, want EPIPE", err)
	}
}

// TestBlockingPipeNotRaw: a blocking pipe stays *os.File (a raw call
// would hold the runtime's processor while it blocks).
func TestBlockingPipeNotRaw(t *testing.T) {
	_, w := pipe(t)
	w.Fd() // Fd puts the file in blocking mode
	if got := Writer(w); got != io.Writer(w) {
		t.Fatalf("a blocking pipe: %T, want the *os.File", got)
	}
}

// TestMadeBlockingAfterWrap: a pipe wrapped while non-blocking and then
// made blocking by another holder of it blocks a read or a write as
// *os.File would: in a system call the runtime knows of, so a garbage
// collection proceeds while it waits, and the call ends when a real
// process writes or reads. The other holder is the guardian's case: the
// pipe's os.Pipe end, whose Fd() clears O_NONBLOCK, while the raw reader
// holds a copy of the descriptor (the shim's, passed over a unix socket).
// Both ways a try avoids blocking are run: RWF_NOWAIT (where the kernel
// honours it, pipesNowait) and the check of the flag before a plain call.
// Before, rawio checked the flag once, at Wrap, and the raw call blocked
// holding its processor: runtime.GC() waited for the other process.
func TestMadeBlockingAfterWrap(t *testing.T) {
	for _, tc := range []struct {
		name, script, wchan string
		nowait              bool
	}{
		{"read", "sleep 3; printf x", "pipe_read", false},
		{"write", "sleep 3; cat >/dev/null", "pipe_write", false},
		{"read/nowait", "sleep 3; printf x", "pipe_read", true},
		{"write/nowait", "sleep 3; cat >/dev/null", "pipe_write", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.nowait && !pipesNowait() {
				t.Skip("this kernel does not honour RWF_NOWAIT on pipes (before 6.5): the flag is checked instead (the other subtests)")
			}
			op := strings.TrimSuffix(tc.name, "/nowait")
			r, w := pipe(t)
			mine, theirs := r, w
			if op == "write" {
				mine, theirs = w, r
			}
			copyOf := dup(t, mine)
			rw := Wrap(copyOf)
			if rw == nil {
				t.Fatal("a non-blocking pipe was not wrapped raw")
			}
			if rr, ok := rw.(*raw); ok {
				rr.rnowait, rr.wnowait = tc.nowait, tc.nowait
			}
			cmd := exec.Command("sh", "-c", tc.script)
			if op == "read" {
				cmd.Stdout = theirs
			} else {
				cmd.Stdin = theirs
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			theirs.Close()
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			mine.Fd() // the other holder: os.Pipe's end, made blocking
			if !isBlocking(t, copyOf) {
				t.Fatal("Fd() left the pipe non-blocking: the test would show nothing")
			}

			done := make(chan error, 1)
			go func() {
				var err error
				if op == "read" {
					var b [8]byte
					_, err = rw.Read(b[:])
				} else {
					// More than the pipe holds: the write waits for cat.
					_, err = rw.Write(make([]byte, 1<<20))
				}
				done <- err
			}()
			// The call waits: in the kernel, on the pipe (a plain call
			// on a blocking pipe), or in the poller (RWF_NOWAIT), so the
			// collection below cannot run before it.
			testenv.WaitFor(t, 2*time.Second, "the "+op+" waiting", func() bool { return inWchan(tc.wchan) || inPoller() })
			start := time.Now()
			runtime.GC()
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Fatalf("runtime.GC() took %v while a %s waited on a blocking pipe: the call held its processor", d, op)
			}
			select {
			case err := <-done:
				t.Fatalf("the %s ended before the other process acted: %v", op, err)
			default:
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("the %s did not end when the other process acted", op)
			}
			if rr, ok := rw.(*raw); ok && tc.nowait && !(rr.rnowait && rr.wnowait) {
				t.Fatal("the kernel refused RWF_NOWAIT: the subtest ran the flag check instead")
			}
		})
	}
}

// dup is a second *os.File of f's pipe (the same description, so the
// same flags), as a descriptor received over a unix socket is.
func dup(t *testing.T, f *os.File) *os.File {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	d := -1
	if cerr := rc.Control(func(fd uintptr) { d, err = syscall.Dup(int(fd)) }); cerr != nil || err != nil {
		t.Fatalf("dup: %v %v", cerr, err)
	}
	syscall.CloseOnExec(d)
	c := os.NewFile(uintptr(d), f.Name())
	t.Cleanup(func() { c.Close() })
	return c
}

// isBlocking asks the kernel whether f's description is blocking now.
func isBlocking(t *testing.T, f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl uintptr
	var e syscall.Errno
	rc.Control(func(fd uintptr) { fl, _, e = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0) })
	if e != 0 {
		t.Fatal(e)
	}
	return fl&syscall.O_NONBLOCK == 0
}

// inPoller reports whether a goroutine waits in the poller for a raw read
// or write (RawRead, RawWrite).
func inPoller() bool {
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "runtime_pollWait") && (strings.Contains(g, ").RawRead(") || strings.Contains(g, ").RawWrite(")) {
			return true
		}
	}
	return false
}

// inWchan reports whether a thread of this process waits in the kernel
// function named (/proc/self/task/*/wchan; Linux 6.16 and later say
// anon_pipe_read for pipe_read).
func inWchan(name string) bool {
	tasks, _ := filepath.Glob("/proc/self/task/*/wchan")
	for _, p := range tasks {
		if b, err := os.ReadFile(p); err == nil && strings.TrimPrefix(strings.TrimSpace(string(b)), "anon_") == name {
			return true
		}
	}
	return false
}

// TestRawNoAllocs: a read and a write that need no wait allocate nothing
// (they run for every message the shim passes on).
func TestRawNoAllocs(t *testing.T) {
	r, w := pipe(t)
	rr, rw := Reader(r), Writer(w)
	msg, buf := []byte("x\n"), make([]byte, 16)
	if a := testing.AllocsPerRun(100, func() {
		rw.Write(msg)
		rr.Read(buf)
	}); a != 0 {
		t.Fatalf("%.1f allocations per write and read, want 0", a)
	}
}
