//go:build unix && !linux && !darwin

package guardian

// becomeSubreaper: not available here.
func becomeSubreaper() error { return nil }

// reapOrphans: nothing re-parents to us here.
func reapOrphans() {}

// marked: no portable way to read another process's environment here; the
// process group kill is all there is.
func marked(string) []int { return nil }
