//go:build unix

package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// Alive reports whether pid is a live process: it exists and is not a
// zombie.
func Alive(pid int) bool { return procinfo.Alive(pid) }

// ParentPID is pid's parent (0 when unknown).
func ParentPID(pid int) int {
	if p, err := procinfo.Get(pid); err == nil {
		return p.PPID
	}
	return 0
}

// StatusKB is a "Field:   N kB" line of /proc/PID/status (Linux), such as
// VmRSS, RssAnon or VmHWM.
func StatusKB(pid int, field string) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if name, v, ok := strings.Cut(line, ":"); ok && name == field {
			if f := strings.Fields(v); len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// Gone waits up to within until none of pids is alive, and reports
// whether that happened: for helpers that return an error of their own.
func Gone(within time.Duration, pids ...int) bool {
	deadline := time.Now().Add(within)
	for {
		left := 0
		for _, p := range pids {
			if Alive(p) {
				left++
			}
		}
		if left == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitGone waits up to within until none of pids is alive; it reports the
// survivors as errors (what names them) and SIGKILLs them, so that a
// failing test leaves nothing behind either.
func WaitGone(tb testing.TB, what string, within time.Duration, pids ...int) {
	tb.Helper()
	if Gone(within, pids...) {
		return
	}
	for _, p := range pids {
		if Alive(p) {
			tb.Errorf("%s: pid %d still runs %v later", what, p, within)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}
