package redact

import (
	"sort"
	"strings"
)

// The rules as hand-written scanners, each equivalent to one regular
// expression (kept in the tests as the reference they are fuzzed against,
// FuzzScannersMatchRegexps). Redaction runs on every traffic-log message
// and tool results can be megabytes: the scanners look only where a
// literal (a keyword, "://", a token prefix) occurs, so text without one
// costs a few fast substring searches, where the expressions cost about a
// microsecond a byte.

// isSpace is RE2's \s: [\t\n\f\r ].
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// isWord is RE2's \w, the sides of \b.
func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// boundaryBefore reports whether \b holds before s[i], which is a word
// character.
func boundaryBefore(s string, i int) bool { return i == 0 || !isWord(s[i-1]) }

// lowerASCII lowers A-Z only, so that byte offsets stay those of s.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// occurrences returns the offsets of every occurrence of each word in s,
// sorted.
func occurrences(s string, words []string) []int {
	var at []int
	for _, w := range words {
		for i := 0; ; {
			j := strings.Index(s[i:], w)
			if j < 0 {
				break
			}
			at = append(at, i+j)
			i += j + 1
		}
	}
	sort.Ints(at)
	return at
}

// replacer builds the output of a left-to-right pass of replacements.
type replacer struct {
	s    string
	b    strings.Builder
	last int // s[:last] is written
}

func (r *replacer) replace(from, to int, with string) {
	if r.last == 0 {
		r.b.Grow(len(r.s))
	}
	r.b.WriteString(r.s[r.last:from])
	r.b.WriteString(with)
	r.last = to
}

func (r *replacer) String() string {
	if r.last == 0 {
		return r.s
	}
	r.b.WriteString(r.s[r.last:])
	return r.b.String()
}

// httpURLs applies URL to every `\bhttps?://[^\s"'<>\\]+`.
func httpURLs(s string) string {
	r := &replacer{s: s}
	for _, i := range occurrences(s, []string{"://"}) {
		start := -1
		switch {
		case i >= 5 && s[i-5:i] == "https" && boundaryBefore(s, i-5):
			start = i - 5
		case i >= 4 && s[i-4:i] == "http" && boundaryBefore(s, i-4):
			start = i - 4
		}
		if start < r.last {
			continue
		}
		end := i + 3
		for end < len(s) && !isSpace(s[end]) && !strings.ContainsRune(`"'<>\`, rune(s[end])) {
			end++
		}
		if end > i+3 {
			r.replace(start, end, textURL(s[start:end]))
		}
	}
	return r.String()
}

// credentials replaces `://[^/\s:@"'\\]+:[^/\s@"'\\]+@` with ://[REDACTED]@.
func credentials(s string) string {
	r := &replacer{s: s}
	for _, i := range occurrences(s, []string{"://"}) {
		if i < r.last {
			continue
		}
		k := i + 3
		for k < len(s) && !isSpace(s[k]) && !strings.ContainsRune(`/:@"'\`, rune(s[k])) {
			k++
		}
		if k == i+3 || k >= len(s) || s[k] != ':' {
			continue
		}
		k++
		p := k
		for k < len(s) && !isSpace(s[k]) && !strings.ContainsRune(`/@"'\`, rune(s[k])) {
			k++
		}
		if k == p || k >= len(s) || s[k] != '@' {
			continue
		}
		r.replace(i, k+1, "://"+Mark+"@")
	}
	return r.String()
}

var bearerWords = []string{"bearer", "basic", "token"}

// isTokenChar is [A-Za-z0-9._~+/=-].
func isTokenChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("._~+/=-", c) >= 0
}

// bearers replaces `(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}`
// with the word, a space and Mark.
func bearers(s string) string {
	lower := lowerASCII(s)
	r := &replacer{s: s}
	for _, i := range occurrences(lower, bearerWords) {
		if i < r.last || !boundaryBefore(s, i) {
			continue
		}
		w := 5
		if strings.HasPrefix(lower[i:], "bearer") {
			w = 6
		}
		k := i + w
		for k < len(s) && isSpace(s[k]) {
			k++
		}
		if k == i+w {
			continue
		}
		t := k
		for k < len(s) && isTokenChar(s[k]) {
			k++
		}
		if k-t >= 6 {
			r.replace(i, k, s[i:i+w]+" "+Mark)
		}
	}
	return r.String()
}

var tokenPrefixes = []string{"sk-", "sk_live_", "ghp_", "gho_", "ghs_", "github_pat_", "glpat-", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "AKIA", "AIza"}

// prefixed replaces `\b(?:sk-|sk_live_|ghp_|...|AKIA|AIza)[A-Za-z0-9_-]{8,}`
// with Mark.
func prefixed(s string) string {
	r := &replacer{s: s}
	for _, i := range occurrences(s, tokenPrefixes) {
		if i < r.last || !boundaryBefore(s, i) {
			continue
		}
		// At one offset at most one prefix can match but "sk-" and
		// "sk_live_" share their start: try each, in the expression's order.
		for _, p := range tokenPrefixes {
			if !strings.HasPrefix(s[i:], p) {
				continue
			}
			k := i + len(p)
			for k < len(s) && (isWord(s[k]) || s[k] == '-') {
				k++
			}
			if k-i-len(p) >= 8 {
				r.replace(i, k, Mark)
				break
			}
		}
	}
	return r.String()
}

var secretWords = []string{"token", "secret", "password", "passwd", "pwd", "apikey", "api_key", "api-key", "authorization", "credential",
	"privatekey", "private_key", "private-key", "accesskey", "access_key", "access-key", "cookie"}

// isKeyChar is [A-Za-z0-9_.-].
func isKeyChar(c byte) bool { return isWord(c) || c == '.' || c == '-' }

// isValueChar is [^\s"'\\,&;{}\[\]].
func isValueChar(c byte) bool { return !isSpace(c) && strings.IndexByte(`"'\,&;{}[]`, c) < 0 }

// keyValues replaces the value in `(?i)([A-Za-z0-9_.-]*(?:token|secret|...)
// [A-Za-z0-9_.-]*)(\\*["']?\s*[:=]\s*\\*["']?)([^\s"'\\,&;{}\[\]]+)` with
// Mark: a key naming a secret, a separator (key=value, key: value, a JSON
// member at any depth of escaping), and the value. The key is the whole
// run of key characters around the word (the expression's greedy key can
// end only where a separator starts, and no separator character is a key
// character). MCP's own progressToken is an opaque counter, not a secret.
func keyValues(s string) string {
	lower := lowerASCII(s)
	r := &replacer{s: s}
	end := 0 // s[:end] has been looked at
	for _, i := range occurrences(lower, secretWords) {
		if i < end {
			continue
		}
		ks, ke := i, i
		for ks > end && isKeyChar(s[ks-1]) {
			ks--
		}
		for ke < len(s) && isKeyChar(s[ke]) {
			ke++
		}
		end = ke
		k := ke
		skip := func(ok func(byte) bool) {
			for k < len(s) && ok(s[k]) {
				k++
			}
		}
		quote := func() {
			if k < len(s) && (s[k] == '"' || s[k] == '\'') {
				k++
			}
		}
		skip(func(c byte) bool { return c == '\\' })
		quote()
		skip(isSpace)
		if k >= len(s) || (s[k] != ':' && s[k] != '=') {
			continue
		}
		k++
		skip(isSpace)
		skip(func(c byte) bool { return c == '\\' })
		quote()
		v := k
		skip(isValueChar)
		if k == v {
			continue
		}
		end = k
		if strings.HasSuffix(lower[ks:ke], "progresstoken") || s[v:k] == urlMark {
			continue
		}
		r.replace(v, k, Mark)
	}
	return r.String()
}
