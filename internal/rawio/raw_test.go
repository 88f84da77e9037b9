//go:build linux

package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// pipe is a pipe whose ends are non-blocking and polled, as os.Pipe
// makes them.
func pipe(t *testing.T) (r, w *os.File) {
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
