//go:build unix

package testenv

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Alive reports whether pid is a live process: it exists and is not a
// zombie (ps, so that it works on Linux and macOS).
func Alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	s := strings.TrimSpace(string(out))
	return err == nil && s != "" && !strings.HasPrefix(s, "Z")
}

// ParentPID is pid's parent (0 when unknown).
func ParentPID(pid int) int {
	out, _ := exec.Command("ps", "-o", "ppid=", "-p", strconv.Itoa(pid)).Output()
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// WaitGone waits up to within until none of pids is alive; it reports the
// survivors as errors (what names them) and SIGKILLs them, so that a
// failing test leaves nothing behind either.
func WaitGone(tb testing.TB, what string, within time.Duration, pids ...int) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		left := 0
		for _, p := range pids {
			if Alive(p) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range pids {
		if Alive(p) {
			tb.Errorf("%s: pid %d still runs %v later", what, p, within)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}
