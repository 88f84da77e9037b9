package ccpolicy

import (
	"net/url"
	"regexp"
	"strings"
)

// urlPattern is a serverUrl rule's pattern, matched as Claude Code 2.1.328
// and 2.1.332 match it (read in both binaries, checked against
// `claude mcp list` by TestPolicyMatchesClaude; docs/claude-code-behaviour.md):
// not as a string but part by part.
//   - "*" alone matches every URL; a pattern without "scheme://" matches
//     none.
//   - The scheme must be the URL's (either case), or "*".
//   - The host is matched without case, a trailing dot dropped; "*" in
//     it spans dots, except in a host whose last label is a number (an
//     IPv4 address such as *.0.0.1 is no URL: then the pattern is matched
//     slash-separated part by part, the port included with the host).
//   - The port must be the URL's, a default one (80 for http, 443 for
//     https) the same as none; a port "*", or none beside a "*" in the
//     host, matches any.
//   - A pattern with no path matches every path of that host and port;
//     otherwise its path and query must match the URL's ("*" spans
//     slashes). The fragment is not compared.
type urlPattern string

func (p urlPattern) matches(raw string) bool {
	pattern := string(p)
	if pattern == "*" {
		return true
	}
	t, err := url.Parse(raw)
	if err != nil || t.Scheme == "" || t.Host == "" {
		return false
	}
	scheme, rest, ok := strings.Cut(pattern, "://")
	if !ok || scheme == "" {
		return false
	}
	scheme = strings.ToLower(scheme)
	if scheme != "*" && scheme != strings.ToLower(t.Scheme) {
		return false
	}
	auth, pathq := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		auth, pathq = rest[:i], rest[i:]
	}
	pathq, _, _ = strings.Cut(pathq, "#")
	if i := strings.LastIndex(auth, "@"); i >= 0 {
		auth = auth[i+1:]
	}
	host, port := auth, ""
	if i := strings.LastIndex(auth, ":"); i >= 0 && !strings.Contains(auth[i:], "]") {
		host, port = auth[:i], auth[i+1:]
	}
	if port != "*" && strings.Contains(port, "*") || strings.Contains(host, "*") && numericLast(host) {
		// Not a URL even with the port a number, or a host that ends
		// in a number (an IPv4 address) with a "*": Claude Code then
		// matches the whole pattern slash-separated part by part.
		whole := strings.ToLower(t.Scheme) + "://" + t.Host + escapedPath(t) + query(t)
		return partwise(pattern, whole)
	}
	anyPort := port == "*" || port == "" && strings.Contains(host, "*")
	norm := func(h string) string { return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".") }
	if !glob(norm(host), norm(t.Hostname())) {
		return false
	}
	if !anyPort && effectivePort(scheme, port) != effectivePort(strings.ToLower(t.Scheme), t.Port()) {
		return false
	}
	if pathq == "" {
		return true
	}
	if !strings.HasPrefix(pathq, "/") {
		pathq = "/" + pathq
	}
	return glob(pathq, escapedPath(t)+query(t))
}

func escapedPath(t *url.URL) string {
	if p := t.EscapedPath(); p != "" {
		return p
	}
	return "/"
}

func query(t *url.URL) string {
	if t.RawQuery == "" {
		return ""
	}
	return "?" + t.RawQuery
}

// effectivePort is port, or "" for the scheme's default one (a URL
// parser drops it).
func effectivePort(scheme, port string) string {
	switch scheme + ":" + port {
	case "http:80", "https:443", "ws:80", "wss:443", "ftp:21":
		return ""
	}
	return port
}

// glob says whether s matches pattern, where "*" matches any run of
// characters and everything else itself.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("(?s)^" + strings.Join(parts, ".*") + "$").MatchString(s)
}

// partwise matches pattern and s split at "/", part by part.
func partwise(pattern, s string) bool {
	ps, ss := strings.Split(pattern, "/"), strings.Split(s, "/")
	if len(ps) != len(ss) {
		return false
	}
	for i := range ps {
		if !glob(ps[i], ss[i]) {
			return false
		}
	}
	return true
}

// numericLast says whether host's last label is a number, which makes a
// URL parser read it as an IPv4 address.
func numericLast(host string) bool {
	l := host[strings.LastIndex(strings.TrimSuffix(host, "."), ".")+1:]
	l = strings.TrimSuffix(l, ".")
	if l == "" {
		return false
	}
	if strings.HasPrefix(strings.ToLower(l), "0x") {
		return true
	}
	for _, c := range l {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// deniesLoosely says whether a deny rule of pattern p matches raw in one
// of the looser forms Claude Code 2.1.332 also tries for a deny rule
// (2.1.328 does not; an allow rule never does): the URL without its
// query and fragment, without its trailing slashes, and with the
// pattern's trailing slashes instead. Measured: `http://127.0.0.1:*/mcp`
// blocks .../mcp?k=1 and .../mcp/, and `http://127.0.0.1:*/mcp/` blocks
// .../mcp, in 2.1.332 alone. mcp-heal never runs what either release
// blocks.
func (p urlPattern) deniesLoosely(raw string) bool {
	t, err := url.Parse(raw)
	if err != nil || t.Scheme == "" || t.Host == "" {
		return false
	}
	t.RawQuery, t.ForceQuery, t.Fragment, t.RawFragment = "", false, "", ""
	bare := t.String()
	trimmed := strings.TrimRight(bare, "/")
	slashes := ""
	if i := strings.Index(string(p), "://"); i >= 0 {
		rest := string(p)[i+3:]
		if j := strings.Index(rest, "/"); j >= 0 && !strings.ContainsAny(rest[j:], "?#*") {
			path := rest[j:]
			slashes = path[len(strings.TrimRight(path, "/")):]
		}
	}
	for _, v := range []string{bare, trimmed, trimmed + slashes} {
		if p.matches(v) {
			return true
		}
	}
	return false
}
