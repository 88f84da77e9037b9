//go:build unix

package guardian

import (
	"os"
	"syscall"
	"testing"
)

// TestSendKeepsPipesNonBlocking: sending the server's pipes over the
// control socket leaves them non-blocking. O_NONBLOCK is the pipe's, shared
// by the shim that reads it raw (internal/rawio); send took each
// descriptor with (*os.File).Fd(), which made the pipe blocking, and the
// shim's raw read of it would then block a thread the runtime does not
// know is blocked.
func TestSendKeepsPipesNonBlocking(t *testing.T) {
	sp, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := fileConn(os.NewFile(uintptr(sp[0]), "a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := fileConn(os.NewFile(uintptr(sp[1]), "b"))
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := newCtrl(a), newCtrl(b)
	defer ca.close()
	defer cb.close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := ca.send(msg{Op: "started"}, r, w); err != nil {
		t.Fatal(err)
	}
	m, fds, err := cb.recv()
	if err != nil || m.Op != "started" || len(fds) != 2 {
		t.Fatalf("recv: %+v, %d descriptors, %v; want started with 2", m, len(fds), err)
	}
	defer closeFDs(fds)
	for i, fd := range fds {
		fl, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
		if e != 0 {
			t.Fatal(e)
		}
		if fl&syscall.O_NONBLOCK == 0 {
			t.Errorf("pipe end %d is blocking after send: send made it so (the flag is the pipe's, shared with the reader)", i)
		}
	}
	// The sender's files still work, through the poller.
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	var one [1]byte
	if n, err := r.Read(one[:]); n != 1 || err != nil {
		t.Fatalf("read after send: %d, %v", n, err)
	}
}
