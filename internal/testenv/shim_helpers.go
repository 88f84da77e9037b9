package testenv

import "testing"

// RuntimeDir is a new directory for a test's XDG_RUNTIME_DIR, removed when
// tb ends: SocketPath's directory, short enough for the keeper's sockets
// under it (a unix socket's path must stay under 104 bytes on macOS).
func RuntimeDir(tb testing.TB) string {
	tb.Helper()
	return SocketPath(tb, "")
}
