package testenv

import "testing"

// lock fails the test: the tests run on Linux and macOS only (Windows
// only builds).
func lock(tb testing.TB, path string) func() {
	tb.Helper()
	tb.Fatalf("testenv: installing prerequisites is not supported on Windows (%s)", path)
	return func() {}
}
