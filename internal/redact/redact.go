// Package redact is mcp-heal's one rule for secrets in what it prints, logs
// and records: status, doctor, heal, dry runs, the lifecycle and traffic
// logs, state records, incidents and hook output all pass text through it.
//
// Secrets reach that text from the user's config (env and header values,
// URL tokens and passwords) and from servers (stderr lines, tool results,
// error bodies). The rule over-redacts on purpose: a value lost from a log
// costs less than a token shown to the model or kept in a file.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mark replaces a secret in text.
const Mark = "[REDACTED]"

// urlMark replaces a secret inside a URL, where brackets would be escaped.
const urlMark = "REDACTED"

// Compiled on first use: every mcp-heal process, hooks included, links this
// package, and most never redact anything.
var rules = sync.OnceValue(func() *ruleSet {
	return &ruleSet{
		httpURL: regexp.MustCompile(`\bhttps?://[^\s"'<>\\]+`),
		creds:   regexp.MustCompile(`://[^/\s:@"'\\]+:[^/\s@"'\\]+@`),
		bearer:  regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`),
		prefix:  regexp.MustCompile(`\b(?:sk-|sk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpr]-|AKIA|AIza)[A-Za-z0-9_-]{8,}`),
		// key = value, key: value, "key": "value", and the same inside JSON
		// that is itself a string (a tool result's text holding JSON:
		// \"api_key\":\"...\", any depth of escaping).
		kv: regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|authorization|credential|private[_-]?key|access[_-]?key|cookie)[A-Za-z0-9_.-]*)(\\*["']?\s*[:=]\s*\\*["']?)([^\s"'\\,&;{}\[\]]+)`),
	}
})

type ruleSet struct{ httpURL, creds, bearer, prefix, kv *regexp.Regexp }

// String removes what looks like a secret from s: the password and query
// values of URLs, other URL credentials, bearer and basic tokens,
// well-known token prefixes (sk-, ghp_, AKIA...), and the values of
// key=value, key: value and JSON members whose key names a secret, also
// inside escaped JSON.
func String(s string) string {
	re := rules()
	if strings.Contains(s, "://") {
		s = re.httpURL.ReplaceAllStringFunc(s, URL)
		s = re.creds.ReplaceAllString(s, "://"+Mark+"@")
	}
	s = re.bearer.ReplaceAllString(s, "$1 "+Mark)
	s = re.prefix.ReplaceAllString(s, Mark)
	s = re.kv.ReplaceAllStringFunc(s, func(m string) string {
		sub := re.kv.FindStringSubmatch(m)
		key := strings.ToLower(sub[1])
		// MCP's own progressToken is an opaque counter, not a secret.
		if strings.HasSuffix(key, "progresstoken") || strings.HasPrefix(sub[3], Mark) || sub[3] == urlMark {
			return m
		}
		return sub[1] + sub[2] + Mark
	})
	return s
}

// Strings applies String to each of ss, in a new slice.
func Strings(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = String(s)
	}
	return out
}

// URL returns raw with its password and every query value replaced and its
// fragment dropped; the scheme, user, host, path and query keys stay, so
// the reader still sees which server it is. It works on the text as it is
// (no parsing and re-encoding), so it also handles what is not quite a URL
// and redacting twice changes nothing more.
func URL(raw string) string {
	raw, _, _ = strings.Cut(raw, "#")
	if base, q, ok := strings.Cut(raw, "?"); ok {
		raw = base + "?" + query(q)
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	authority, path := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if user, _, hasPass := strings.Cut(authority[:at], ":"); hasPass {
			authority = user + ":" + urlMark + authority[at:]
		}
	}
	return scheme + "://" + authority + path
}

// query replaces every value of a raw query string, keeping the keys.
func query(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + urlMark
		} else if p != "" {
			// A bare value (?sk-abc) is as secret as a named one.
			parts[i] = urlMark
		}
	}
	return strings.Join(parts, "&")
}

// Values redacts known secret values (a bridge's header values, URL
// password and query values), wherever a server echoes them, and then
// applies String.
type Values struct{ secrets []string }

// Add records secret values; values shorter than 4 bytes are ignored, as
// replacing them would mangle ordinary text.
func (v *Values) Add(secrets ...string) {
	for _, s := range secrets {
		if len(s) >= 4 && !slices.Contains(v.secrets, s) {
			v.secrets = append(v.secrets, s)
		}
	}
	// Longest first, so a token inside a longer value is not half-replaced.
	slices.SortFunc(v.secrets, func(a, b string) int { return len(b) - len(a) })
}

// String replaces the known values in s, then applies String.
func (v *Values) String(s string) string {
	if v != nil {
		for _, sec := range v.secrets {
			if strings.Contains(s, sec) {
				s = strings.ReplaceAll(s, sec, Mark)
			}
		}
	}
	return String(s)
}
