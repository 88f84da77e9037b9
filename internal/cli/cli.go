// Package cli holds the pieces of mcp-heal's command line that are not one
// subcommand's: the usage error internal packages return for a bad flag
// value, flag value types (sizes, values read from the environment), the
// flag set and --help every subcommand uses, and the suggestion for a
// mistyped subcommand.
package cli

import (
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Closest is the choice nearest to a mistyped name (at most two edits
// away, or starting with it), "" if none is close: the "did you mean" of
// a mistyped subcommand.
func Closest(name string, choices []string) string {
	best, bestD := "", 3
	for _, c := range choices {
		d := editDistance(name, c)
		if len(name) >= 3 && strings.HasPrefix(c, name) {
			d = 1
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// QuoteList is names quoted and joined with commas, for messages.
func QuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = text.QuotedName(n)
	}
	return strings.Join(q, ", ")
}
