//go:build !unix

package state

// oNoFollow: Windows has no O_NOFOLLOW; the shim and hooks do not run
// there yet.
const oNoFollow = 0

// lockPath does not lock where flock(2) does not exist: the shim and hooks
// do not run there yet (issue: Windows support).
func lockPath(string) (func(), error) { return func() {}, nil }
