package testenv

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RuntimeDir is a new directory for a test's XDG_RUNTIME_DIR, removed when
// tb ends: SocketPath's directory, short enough for the keeper's sockets
// under it (a unix socket's path must stay under 104 bytes on macOS).
func RuntimeDir(tb testing.TB) string {
	tb.Helper()
	return SocketPath(tb, "")
}

// ReadPIDs waits, within d at most, until the file at path holds n pids
// or more (separated by white space, as a shell's echo writes them), and
// returns them; the test fails if it does not.
func ReadPIDs(tb testing.TB, path string, n int, within time.Duration) []int {
	tb.Helper()
	var pids []int
	WaitFor(tb, within, strconv.Itoa(n)+" pids in "+path, func() bool {
		b, _ := os.ReadFile(path)
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil && p > 0 {
				pids = append(pids, p)
			}
		}
		return len(pids) >= n
	})
	return pids
}
