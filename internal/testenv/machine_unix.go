//go:build unix

package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// `go test ./...` runs packages side by side. A few tests hold the
// machine to a time budget set by others (the conformance suite gives a
// server 500 ms to its first frame), and one test loads both cores for
// minutes (the Windows run under Wine). Side by side, the first failed
// for load alone, on old and new code alike. TimingSensitive and
// LoadsMachine keep them apart with one lock in the cache directory: any
// number of timing tests at once, or the heavy test alone.

// TimingSensitive holds the machine lock shared until tb ends: no
// LoadsMachine test runs meanwhile.
func TimingSensitive(tb testing.TB) { machineLock(tb, syscall.LOCK_SH) }

// LoadsMachine holds the machine lock alone until tb ends: it waits for
// every TimingSensitive test to end, and none starts meanwhile.
func LoadsMachine(tb testing.TB) { machineLock(tb, syscall.LOCK_EX) }

func machineLock(tb testing.TB, how int) {
	tb.Helper()
	path := filepath.Join(CacheDir(), "machine.lock")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		tb.Fatalf("testenv: machine lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		tb.Fatalf("testenv: machine lock: %v", err)
	}
	tb.Cleanup(func() { f.Close() })
}
