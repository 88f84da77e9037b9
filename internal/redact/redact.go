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
	"slices"
	"strings"
)

// Mark replaces a secret in text.
const Mark = "[REDACTED]"

// urlMark replaces a secret inside a URL, where brackets would be escaped.
const urlMark = "REDACTED"

// String removes what looks like a secret from s: the password and query
// values of URLs, other URL credentials, bearer and basic tokens,
// well-known token prefixes (sk-, ghp_, AKIA...), and the values of
// key=value, key: value and JSON members whose key names a secret, also
// inside escaped JSON (scan.go).
func String(s string) string {
	if strings.Contains(s, "://") {
		s = credentials(httpURLs(s))
	}
	return keyValues(prefixed(bearers(s)))
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

// HiddenURL is what mcp-heal shows in place of a remote server's URL.
const HiddenURL = "[URL hidden]"

// URL is the one rule for a remote server's URL in what mcp-heal prints,
// logs and records: no part of it is shown, HiddenURL stands for all of it.
// Hosted MCP servers put their key anywhere in the URL (the path as often
// as the query, the host for per-tenant servers, the userinfo, the
// fragment), and the server's name already says which server it is. ""
// stays "" (no URL).
func URL(raw string) string {
	if raw == "" {
		return ""
	}
	return HiddenURL
}

// URLParts are the pieces of raw a server or an error may echo back, for
// Values.Add: the host (with and without its port), the userinfo, the
// path and its longer segments, every query value and the fragment.
// Pieces too short to be told from ordinary words are left out (Add
// ignores those under 4 bytes).
func URLParts(raw string) []string {
	rest := raw
	if _, r, ok := strings.Cut(rest, "://"); ok {
		rest = r
	}
	var parts []string
	rest, frag, _ := strings.Cut(rest, "#")
	rest, q, _ := strings.Cut(rest, "?")
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user, pass, _ := strings.Cut(authority[:at], ":")
		parts = append(parts, authority[:at], user, pass)
		authority = authority[at+1:]
	}
	parts = append(parts, authority)
	if h, _, ok := strings.Cut(strings.TrimPrefix(authority, "["), "]"); ok {
		parts = append(parts, h)
	} else if h, _, ok := strings.Cut(authority, ":"); ok {
		parts = append(parts, h)
	}
	if path != "/mcp" && path != "/sse" {
		parts = append(parts, path)
	}
	for _, seg := range strings.Split(path, "/") {
		// Long segments only: "/v1/servers/mcp" must not redact words.
		if len(seg) >= 12 {
			parts = append(parts, seg)
		}
	}
	for _, kv := range strings.Split(q, "&") {
		if _, v, ok := strings.Cut(kv, "="); ok {
			parts = append(parts, v)
		} else {
			parts = append(parts, kv)
		}
	}
	return append(parts, frag)
}

// textURL returns raw, a URL found in free text (a server's words, an
// error), with its password and every query value replaced and its
// fragment dropped; the scheme, user, host, path and query keys stay, so
// the reader still sees which server it is. It works on the text as it is
// (no parsing and re-encoding), so it also handles what is not quite a URL
// and redacting twice changes nothing more.
func textURL(raw string) string {
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

// AddURL records the parts of a remote server's URL (URLParts).
func (v *Values) AddURL(raw string) { v.Add(URLParts(raw)...) }

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
