package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{`Authorization: Bearer abcdef123456`, `Authorization: [REDACTED] [REDACTED]`},
		{`{"api_key":"xyz123","name":"n"}`, `{"api_key":"[REDACTED]","name":"n"}`},
		{`PASSWORD=hunter2 ok`, `PASSWORD=[REDACTED] ok`},
		{`https://user:pw@example.com/x`, `https://[REDACTED]@example.com/x`},
		{`key sk-abcdefghijklmnop`, `key [REDACTED]`},
		{`{"progressToken":5}`, `{"progressToken":5}`},
		{`plain text`, `plain text`},
		// A tool result whose text is JSON: the secret sits in escaped JSON.
		{`{"content":[{"type":"text","text":"{\"api_key\":\"abcd1234efgh\",\"n\":1}"}]}`, `{"content":[{"type":"text","text":"{\"api_key\":\"[REDACTED]\",\"n\":1}"}]}`},
		{`"{\\\"client_secret\\\": \\\"s3cr3tvalue\\\"}"`, `"{\\\"client_secret\\\": \\\"[REDACTED]\\\"}"`},
		// URLs: every query value and the password go, the rest stays.
		{`GET https://api.example.com/mcp?key=abc123&v=2 failed`, `GET https://api.example.com/mcp?key=REDACTED&v=REDACTED failed`},
		{`dial "http://h:8080/sse?sk-abcdef" refused`, `dial "http://h:8080/sse?REDACTED" refused`},
		{`postgres://app:hunter2@db/x`, `postgres://[REDACTED]@db/x`},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
		if again := String(String(tt.in)); again != String(tt.in) {
			t.Errorf("String is not idempotent on %q: %q then %q", tt.in, String(tt.in), again)
		}
	}
}

func TestURL(t *testing.T) {
	// A remote server's URL: nothing of it is shown, wherever its key is.
	for _, in := range []string{"https://x.example/mcp", "https://x.example/mcp/sk-key1234/sse", "https://u:p@x.example/mcp#frag", "https://x.example/mcp?token=abc&x", "::not a url?token=abc#x"} {
		if got := URL(in); got != HiddenURL {
			t.Errorf("URL(%q) = %q, want %q", in, got, HiddenURL)
		}
	}
	if URL("") != "" {
		t.Errorf("URL(\"\") = %q, want \"\"", URL(""))
	}
	// Free text keeps a URL's host and path, without its query values,
	// password and fragment.
	tests := []struct{ in, want string }{
		{"https://x.example/mcp", "https://x.example/mcp"},
		{"https://x.example/mcp?token=abc&x", "https://x.example/mcp?token=REDACTED&REDACTED"},
		{"https://u:p@x.example/mcp#frag", "https://u:REDACTED@x.example/mcp"},
		{"https://u@x.example/", "https://u@x.example/"},
		{"::not a url?token=abc#x", "::not a url?token=REDACTED"},
	}
	for _, tt := range tests {
		if got := textURL(tt.in); got != tt.want {
			t.Errorf("textURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestURLParts(t *testing.T) {
	var v Values
	v.AddURL("https://alice:pw-secret1@tenant-42.example.com:8443/mcp/sk-pathkey12345/sse?token=qtok1&bare-key1#frag-secret")
	in := "dial tcp tenant-42.example.com:8443 refused; GET /mcp/sk-pathkey12345/sse?token=qtok1 by alice:pw-secret1 #frag-secret bare-key1"
	got := v.String(in)
	for _, s := range []string{"tenant-42", "pathkey12345", "qtok1", "pw-secret1", "frag-secret", "bare-key1"} {
		if strings.Contains(got, s) {
			t.Errorf("%q survived: %s", s, got)
		}
	}
	var w Values
	w.AddURL("http://127.0.0.1:9/v1/servers/mcp")
	if got := w.String("the remote servers answered"); got != "the remote servers answered" {
		t.Errorf("a short path segment redacted ordinary words: %q", got)
	}
}

func TestValues(t *testing.T) {
	var v Values
	v.Add("Bearer tok-1234567", "tok-1234567", "abc")
	got := v.String(`server said: bad token tok-1234567 (abc)`)
	if want := `server said: bad token [REDACTED] (abc)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var none *Values
	if got := none.String("password=x1"); got != "password=[REDACTED]" {
		t.Errorf("nil Values: got %q", got)
	}
}

func TestJSON(t *testing.T) {
	in := `{
  "mcpServers": {
    "gh": {"command": "npx", "args": ["-y", "srv", "--token=ghp_abcdefgh12345"], "env": {"GITHUB_TOKEN": "plainvalue", "DEBUG": ""}},
    "remote": {"type": "http", "url": "https://api.example/mcp?apikey=k123", "headers": {"X-Api": "v-1"}},
    "proxy": {"command": "npx", "args": ["mcp-remote", "https://mcp.example/t/pathkey-9876/sse"]},
    "wrapped": {"command": "mcp-heal", "args": ["shim"], "env": {"MCP_HEAL_HEADER_X": "hv"}, "_mcp_heal": {"original": {"headers": {"Authorization": "Bearer z"}}}}
  },
  "n": 3, "ok": true, "url": null
}`
	got := string(JSON([]byte(in)))
	for _, secret := range []string{"ghp_abcdefgh12345", "plainvalue", "k123", "v-1", "hv", "Bearer z", "pathkey-9876", "mcp.example"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q survived:\n%s", secret, got)
		}
	}
	for _, kept := range []string{`"DEBUG": ""`, `"command": "npx"`, `"GITHUB_TOKEN": "[REDACTED]"`, `"url": "[URL hidden]"`, `"args": ["mcp-remote", "[URL hidden]"]`, `"n": 3, "ok": true, "url": null`} {
		if !strings.Contains(got, kept) {
			t.Errorf("lost %q:\n%s", kept, got)
		}
	}
	if strings.Count(got, "\n") != strings.Count(in, "\n") || !json.Valid([]byte(got)) {
		t.Errorf("layout or validity changed:\n%s", got)
	}
	if got := string(JSON([]byte(`not json password=abc12`))); got != `not json password=[REDACTED]` {
		t.Errorf("invalid JSON: got %q", got)
	}
}

var secretKeys = []string{"api_key", "apiKey", "token", "access_token", "client_secret", "password", "Authorization", "private-key", "X-Api-Key", "cookie"}

// FuzzEscapedJSON: a secret under a secret-named key survives no depth of
// JSON-in-a-string nesting (a tool result's text holding JSON, that result
// inside a JSON-RPC message, inside a log line), whatever surrounds it.
func FuzzEscapedJSON(f *testing.F) {
	f.Add(uint8(0), "sk-abcdef123456", uint8(1), "n", "x")
	f.Add(uint8(3), "hunter2hunter2", uint8(2), `a b`, `{"q":1}`)
	f.Add(uint8(6), "Zm9vYmFyYmF6cXV4", uint8(3), "", "")
	f.Fuzz(func(t *testing.T, k uint8, secret string, depth uint8, before, after string) {
		secret = strings.Map(func(r rune) rune {
			if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_~+/=.-", r)) {
				return r
			}
			return -1
		}, secret)
		if len(secret) < 8 || strings.Contains("REDACTED", secret) {
			return
		}
		key := secretKeys[int(k)%len(secretKeys)]
		doc, _ := json.Marshal(map[string]any{"before": before, key: secret, "after": after})
		s := string(doc)
		for range depth % 5 {
			b, _ := json.Marshal(map[string]string{"text": s})
			s = string(b)
		}
		if got := String(s); strings.Contains(got, secret) {
			t.Fatalf("secret %q under %q survived at depth %d:\n%s", secret, key, depth%5, got)
		}
	})
}

// FuzzString: any text is handled without panicking, and redacting twice
// changes nothing more.
func FuzzString(f *testing.F) {
	f.Add(`{"api_key":"x"} https://u:p@h/?a=b Bearer abcdefgh`)
	f.Add(`\\\"token\\\":\\\"abc\\\"`)
	f.Fuzz(func(t *testing.T, s string) {
		once := String(s)
		if twice := String(once); twice != once {
			t.Fatalf("not idempotent:\n in %q\nonce %q\ntwice %q", s, once, twice)
		}
		_ = JSON([]byte(s))
	})
}
