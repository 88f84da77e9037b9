package testenv

import "strings"

// LastLines returns the last n lines of s: the end of a child's log, which
// a failed test prints.
func LastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
