//go:build unix && !linux && !darwin

package guardian

import "time"

// becomeSubreaper: not available here.
func becomeSubreaper() error { return nil }

// killTree: not available here.
func killTree(int, string, map[int]bool) ([]int, bool) { return nil, false }

// reapDead: nothing re-parents to us here.
func reapDead() {}

// marked: no portable way to read another process's environment here; the
// process group kill is all there is.
func marked(string, time.Time) []int { return nil }
