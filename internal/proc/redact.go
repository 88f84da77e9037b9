package proc

import (
	"regexp"
	"strings"
	"sync"
)

// Redaction rules for text the user did not choose to publish: child stderr
// tails (they land in state records hooks show to the model), command lines
// and the traffic log. They over-redact on purpose. Compiled on first use:
// every mcp-heal process, hooks included, links this package.
var redactors = sync.OnceValue(func() *redactRE {
	return &redactRE{
		bearer: regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`),
		kv:     regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|authorization|credential|private[_-]?key|access[_-]?key|cookie)[A-Za-z0-9_.-]*)(["']?\s*[:=]\s*["']?)([^\s"',&;]+)`),
		prefix: regexp.MustCompile(`\b(?:sk-|sk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpr]-|AKIA|AIza)[A-Za-z0-9_-]{8,}`),
		url:    regexp.MustCompile(`://[^/\s:@"]+:[^/\s@"]+@`),
	}
})

type redactRE struct{ bearer, kv, prefix, url *regexp.Regexp }

// Redact removes things that look like secrets from s: values of
// key=value / "key": "value" pairs whose key names a secret, bearer tokens,
// well-known token prefixes and URL credentials.
func Redact(s string) string {
	re := redactors()
	reURL, reBearer, rePrefix, reKV := re.url, re.bearer, re.prefix, re.kv
	s = reURL.ReplaceAllString(s, "://[REDACTED]@")
	s = reBearer.ReplaceAllString(s, "$1 [REDACTED]")
	s = rePrefix.ReplaceAllString(s, "[REDACTED]")
	s = reKV.ReplaceAllStringFunc(s, func(m string) string {
		sub := reKV.FindStringSubmatch(m)
		key := strings.ToLower(sub[1])
		// MCP's own progressToken is an opaque counter, not a secret.
		if strings.HasSuffix(key, "progresstoken") || sub[3] == "[REDACTED]" {
			return m
		}
		return sub[1] + sub[2] + "[REDACTED]"
	})
	return s
}
