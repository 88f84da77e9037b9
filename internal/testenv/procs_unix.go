//go:build unix

package testenv

import (
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
