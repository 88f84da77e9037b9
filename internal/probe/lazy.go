package probe

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles on first use: hooks run on every MCP call and must
// not pay at start-up for patterns only a probe needs.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
