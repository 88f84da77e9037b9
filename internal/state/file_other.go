//go:build !unix

package state

import "os"

// oNoFollow: Windows has no O_NOFOLLOW; the shim and hooks do not run
// there yet.
const oNoFollow = 0

// lockPath does not lock where flock(2) does not exist: the shim and hooks
// do not run there yet (issue: Windows support).
func lockPath(string) (func(), error) { return func() {}, nil }

// Alive reports whether a process with pid exists: on Windows, opening it
// fails when it does not.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
