package ccpolicy

import "testing"

// TestURLPattern: serverUrl patterns as Claude Code 2.1.328 and 2.1.332
// match them; the rows marked live are states of TestPolicyMatchesClaude,
// checked against `claude mcp list` on both releases.
func TestURLPattern(t *testing.T) {
	const u = "http://127.0.0.1:4242/mcp"
	const named = "http://localhost:4242/mcp"
	for _, tt := range []struct {
		pattern, url string
		want         bool
	}{
		{"*", u, true},                                               // live
		{"http://127.0.0.1:*/*", u, true},                            // live
		{"http://127.0.0.1:*", u, true},                              // live: no path, any path
		{"http://127.0.0.1:4242", u, true},                           // live: no path, any path
		{"http://127.0.0.1:4242/", u, false},                         // a path "/" is the root only
		{"HTTP://127.0.0.1:*/mcp", u, true},                          // live: the scheme in capitals
		{"https://127.0.0.1:*/*", u, false},                          // live
		{"http://localhost:*/*", u, false},                           // live: an address, not a server
		{"http://127.0.0.1:1/*", u, false},                           // live
		{"http://127.0.0.1:*/m*", u, true},                           // live
		{"http://127.0.0.1:*/other", u, false},                       // live
		{"127.0.0.1:*/*", u, false},                                  // live: no scheme matches nothing
		{"http://*.0.0.1/*", u, false},                               // live: an IPv4 host with a star is no URL
		{"http://*.0.0.1:*/*", u, true},                              // part by part: the port in the host part
		{"http://LOCALHOST:*/*", named, true},                        // live
		{"http://*host/*", named, true},                              // live: a star in the host, any port
		{"http://local*:*/mcp", named, true},                         // live
		{"http://*.example.com/*", "http://a.b.example.com/x", true}, // a host star spans dots
		{"http://*.example.com/*", "http://example.com/x", false},
		{"https://h.example/mcp", "https://h.example:443/mcp", true}, // the default port is none
		{"http://h/mcp", "http://h/mcp?k=1", false},
		{"http://h/mcp*", "http://h/mcp?k=1", true},
		{"http://h/mcp", "http://h/mcp#f", true},
		{"http://h/MCP", "http://h/mcp", false}, // the path keeps its case
		{"*://h/*", "wss://h/x", true},
	} {
		if got := urlPattern(tt.pattern).matches(tt.url); got != tt.want {
			t.Errorf("%q matches %q: %v, want %v", tt.pattern, tt.url, got, tt.want)
		}
	}
}

// TestURLPatternDeniesLoosely: the looser forms 2.1.332 tries for a deny
// rule (TestPolicyMatchesClaude's "deny url - entry query", "entry
// slash" and "rule slash" states).
func TestURLPatternDeniesLoosely(t *testing.T) {
	for _, tt := range []struct {
		pattern, url string
		want         bool
	}{
		{"http://127.0.0.1:*/mcp", "http://127.0.0.1:4242/mcp?k=1", true},
		{"http://127.0.0.1:*/mcp", "http://127.0.0.1:4242/mcp/", true},
		{"http://127.0.0.1:*/mcp/", "http://127.0.0.1:4242/mcp", true},
		{"http://127.0.0.1:*/mcp", "http://127.0.0.1:4242/other?k=1", false},
		{"http://127.0.0.1:*/mcp", "http://localhost:4242/mcp/", false},
	} {
		if got := urlPattern(tt.pattern).deniesLoosely(tt.url); got != tt.want {
			t.Errorf("%q denies %q loosely: %v, want %v", tt.pattern, tt.url, got, tt.want)
		}
		if urlPattern(tt.pattern).matches(tt.url) {
			t.Errorf("%q matches %q strictly: an allow rule would admit it, which neither release does", tt.pattern, tt.url)
		}
	}
}
