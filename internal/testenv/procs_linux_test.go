package testenv

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestStatusKB(t *testing.T) {
	if kb, err := StatusKB(os.Getpid(), "VmRSS"); err != nil || kb <= 0 {
		t.Errorf("own VmRSS: got %d, %v, want a positive size", kb, err)
	}
	// "Vm" is the start of many fields, and no field of its own.
	if kb, err := StatusKB(os.Getpid(), "Vm"); err == nil {
		t.Errorf("field Vm: got %d, want an error", kb)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if kb, err := StatusKB(gone.Process.Pid, "VmRSS"); err == nil {
		t.Errorf("exited process: got %d, want an error", kb)
	}
}

func TestParentPIDAndAlive(t *testing.T) {
	if got := ParentPID(os.Getpid()); got != os.Getppid() {
		t.Errorf("got parent %d, want %d", got, os.Getppid())
	}
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(gone.Process.Pid) || ParentPID(gone.Process.Pid) != 0 {
		t.Errorf("exited process: alive %v, parent %d; want false, 0", Alive(gone.Process.Pid), ParentPID(gone.Process.Pid))
	}
}

func TestGone(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if !Gone(time.Second, gone.Process.Pid) {
		t.Error("an exited process is not gone")
	}
	if Gone(50*time.Millisecond, os.Getpid()) {
		t.Error("this process is gone")
	}
}
