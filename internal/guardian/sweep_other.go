//go:build unix && !linux

package guardian

// becomeSubreaper: only Linux has a child sub-reaper; the cookie sweep is
// what finds re-parented orphans elsewhere.
func becomeSubreaper() error { return nil }

// killTree: without a sub-reaper, orphaned descendants are not ours to
// list; the caller sweeps by cookie.
func killTree(int, string, map[int]bool) ([]int, bool) { return nil, false }

// reapDead: nothing re-parents to us without a sub-reaper.
func reapDead() {}
