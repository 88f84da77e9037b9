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

// Secrets must not reach the model or a shared terminal through a server's
// stderr. These rules over-redact on purpose.
var (
	reBearer = lazyRegexp(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`)
	reKV     = lazyRegexp(`(?i)\b([A-Za-z0-9_.-]*(?:token|secret|password|api[_-]?key|apikey|authorization|credential)[A-Za-z0-9_.-]*)(["']?\s*[:=]\s*["']?)[^\s"',&;]+`)
	rePrefix = lazyRegexp(`\b(?:sk-|sk_live_|ghp_|gho_|github_pat_|glpat-|xox[abpr]-|AKIA|AIza)[A-Za-z0-9_-]{8,}`)
)

func redact(s string) string {
	s = reBearer().ReplaceAllString(s, "$1 [REDACTED]")
	s = rePrefix().ReplaceAllString(s, "[REDACTED]")
	return reKV().ReplaceAllString(s, "$1$2[REDACTED]")
}
