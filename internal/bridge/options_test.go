package bridge

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseHeaders(t *testing.T) {
	env := map[string]string{"TOKEN": "s3cr3t-token", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	h, err := ParseHeaders([]string{"Authorization: Bearer ${TOKEN}", "X-Team:  a ${TOKEN}b "}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Authorization"); got != "Bearer s3cr3t-token" {
		t.Errorf("Authorization = %q", got)
	}
	if got := h.Get("X-Team"); got != "a s3cr3t-tokenb" {
		t.Errorf("X-Team = %q", got)
	}
	for _, tc := range []struct{ spec, want string }{
		{"Authorization: Bearer ${MISSING}", `uses ${MISSING}, which is not set`},
		{"Authorization: Bearer ${EMPTY}", `uses ${EMPTY}, which is not set`},
		{"s3cr3t-token", `want 'Name: value'`},
		{"Mcp-Session-Id: x", "set by the transport"},
		{"Bad Name: x", "invalid name"},
	} {
		_, err := ParseHeaders([]string{tc.spec}, getenv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseHeaders(%q): got %v, want an error with %q", tc.spec, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("ParseHeaders(%q) error leaks a secret: %v", tc.spec, err)
		}
	}
}

func TestURLs(t *testing.T) {
	for _, bad := range []string{"ftp://h/x", "file:///etc/passwd", "/relative", "127.0.0.1:80/mcp", "http://"} {
		if _, err := New(Options{URL: bad}); err == nil {
			t.Errorf("New(%q) accepted it", bad)
		}
	}
	if _, err := New(Options{URL: "http://h/mcp", Transport: "ws"}); err == nil {
		t.Errorf("transport ws accepted")
	}
	u, _ := url.Parse("https://user:pw1234@h.example/mcp?key=abcd1234&x=1#frag")
	if got, want := RedactURL(u), "[URL hidden]"; got != want {
		t.Errorf("RedactURL = %q, want %q", got, want)
	}
	d, err := New(Options{URL: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Target(), "pw1234") || strings.Contains(d.Target(), "abcd1234") {
		t.Errorf("Target leaks: %s", d.Target())
	}
}

func TestRedactor(t *testing.T) {
	u, _ := url.Parse("http://h/mcp?token=qwerty123")
	h, _ := ParseHeaders([]string{"Authorization: Bearer tok-987654"}, func(string) string { return "" })
	r := newRedactor(u, h)
	got := r.String(`server said: bad token tok-987654 (Bearer tok-987654) for ?token=qwerty123`)
	if strings.Contains(got, "tok-987654") || strings.Contains(got, "qwerty123") {
		t.Errorf("redacted text still holds a secret: %s", got)
	}
}
