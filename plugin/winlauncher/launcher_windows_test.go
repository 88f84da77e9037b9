package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestLauncherBinaryDiesWithIt: Windows has no exec, so the launcher runs
// the binary as its child; when Claude Code ends the launcher (a hook's
// timeout), the job object it put itself in takes the binary too. The
// binary's stdin stays open here, so nothing but the job ends it.
func TestLauncherBinaryDiesWithIt(t *testing.T) {
	p := released(t)
	pidfile := filepath.Join(p.home, "pid")
	cmd := exec.Command(filepath.Join(p.root, "plugin", "mcp-heal"+exeSuffix(runtime.GOOS)), "hook", "PostToolUseFailure")
	cmd.Env = append(append([]string{}, p.env...), "FAKE_BLOCK=1", "FAKE_PIDFILE="+pidfile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(time.Minute); pid == 0; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(pidfile)
		pid, _ = strconv.Atoi(string(b))
		if pid == 0 && time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the binary did not start")
		}
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		t.Fatalf("open the binary's process: %v", err)
	}
	defer windows.CloseHandle(h)
	cmd.Process.Kill() // TerminateProcess, as Claude Code ends a hook
	// cmd.Wait would close the binary's stdin: only after the check.
	ev, err := windows.WaitForSingleObject(h, 30000)
	cmd.Wait()
	if ev != windows.WAIT_OBJECT_0 {
		windows.TerminateProcess(h, 1)
		t.Fatalf("the binary outlived its launcher (wait: %#x, %v)", ev, err)
	}
}
