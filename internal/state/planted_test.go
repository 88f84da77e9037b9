//go:build unix

package state

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test when it has not returned in 10 s: a
// planted FIFO made readers wait for a writer that never comes.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still blocked after 10 s", what)
		return nil
	}
}

// plantFIFO makes path a FIFO nobody writes to.
func plantFIFO(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenFileRefusesFIFOWithoutBlocking: every mode of OpenFile returns
// at once with an error on a FIFO, where open(2) without O_NONBLOCK waits
// for the other end.
func TestOpenFileRefusesFIFOWithoutBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	plantFIFO(t, path)
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_APPEND | os.O_CREATE, os.O_RDWR | os.O_CREATE} {
		err := within(t, "OpenFile(fifo, "+strconv.Itoa(flag)+")", func() error {
			f, err := OpenFile(path, flag)
			if err == nil {
				f.Close()
			}
			return err
		})
		if err == nil {
			t.Errorf("OpenFile(fifo, %#x) succeeded", flag)
		}
	}
}

// TestReadRecordPlanted: a FIFO or a link to /dev/zero planted as a shim
// record is refused at once, and an oversize regular record is refused
// after reading at most MaxRecordBytes+1 bytes.
func TestReadRecordPlanted(t *testing.T) {
	useTempState(t)
	fifo := 4000001
	plantFIFO(t, recordPath(fifo))
	if err := within(t, "Read(fifo record)", func() error { _, err := Read(fifo); return err }); err == nil {
		t.Error("a FIFO record was read")
	}

	zero := 4000002
	if err := os.Symlink("/dev/zero", recordPath(zero)); err != nil {
		t.Fatal(err)
	}
	err := within(t, "Read(record -> /dev/zero)", func() error { _, err := Read(zero); return err })
	if !errors.Is(err, ErrSymlink) {
		t.Errorf("record -> /dev/zero: %v, want ErrSymlink", err)
	}

	big := 4000003
	b := append([]byte(`{"server":"x","pad":"`), make([]byte, MaxRecordBytes)...)
	for i := 21; i < len(b); i++ {
		b[i] = 'a'
	}
	b = append(b, `"}`...)
	if err := os.WriteFile(recordPath(big), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("record of %d bytes: %v, want ErrTooLarge", len(b), err)
	}
}

// TestReadFileDevice: a device node is not a regular file, even one that
// never blocks.
func TestReadFileDevice(t *testing.T) {
	if _, err := ReadFile("/dev/zero", 10); err == nil {
		t.Error("ReadFile(/dev/zero) succeeded")
	}
}
