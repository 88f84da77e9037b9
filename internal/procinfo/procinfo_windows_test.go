package procinfo

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// PROCINFO_TEST_IDLE: this test binary re-executed as a child that runs
// until its stdin ends.
func init() {
	if os.Getenv("PROCINFO_TEST_IDLE") != "" {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
}

// On Windows a process is known by its creation time and image path: this
// process verifies as itself, a child is listed under it, and once it has
// exited (its handle still held by exec) it is neither alive nor verified.
func TestWindowsIdentity(t *testing.T) {
	self, err := Get(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if self.StartKey == "" || !strings.EqualFold(self.Exe, exe) {
		t.Fatalf("self: start %q, exe %q, want exe %q", self.StartKey, self.Exe, exe)
	}
	if err := Verify(os.Getpid(), self.Identity()); err != nil {
		t.Fatal(err)
	}
	var mm *MismatchError
	if err := Verify(os.Getpid(), Identity{StartKey: "1", Exe: self.Exe}); !errors.As(err, &mm) {
		t.Errorf("another start time: %v, want a mismatch", err)
	}

	cmd := exec.Command(exe)
	in, _ := cmd.StdinPipe()
	cmd.Env = append(os.Environ(), "PROCINFO_TEST_IDLE=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kids, err := Children(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("children %v lack %d", kids, cmd.Process.Pid)
	}
	child, err := Get(cmd.Process.Pid)
	if err != nil || child.PPID != os.Getpid() {
		t.Fatalf("child: %+v, %v", child, err)
	}
	// Exited, not yet waited for: exec holds its handle, so it can still
	// be opened, and must not pass for alive.
	in.Close()
	deadline := time.Now().Add(20 * time.Second)
	for Alive(cmd.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := Verify(cmd.Process.Pid, child.Identity()); !errors.Is(err, ErrNotFound) {
		t.Errorf("exited child: %v, want ErrNotFound", err)
	}
	cmd.Wait()
	if _, err := Get(-1); !errors.Is(err, ErrNotFound) {
		t.Errorf("pid -1: %v", err)
	}
}
