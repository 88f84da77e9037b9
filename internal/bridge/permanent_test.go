//go:build unix

package bridge

import (
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// A remote that cannot be used for a reason retrying will not fix soon is
// reported to the client at once, with the cause (the URL hidden), and in the
// state record; before, the call waited for --deadline (30 s, the same as
// Claude Code's connect timeout, so the user saw only "timed out").
func TestPermanentRemoteErrorsAtOnce(t *testing.T) {
	testenv.NeedsFull(t, "the real binary run against five servers")
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed)
	}))
	defer tlsSrv.Close()
	// A server that accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	other := newSink(t)
	port := other.URL[strings.LastIndexByte(other.URL, ':')+1:]
	red := redirector(t, false, false, func() string { return "http://localhost:" + port + "/mcp" })
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid token", http.StatusUnauthorized)
	}))
	defer auth.Close()

	for _, tc := range []struct {
		name  string
		url   string
		flags []string
		want  string
	}{
		{"self-signed certificate", tlsSrv.URL + "/mcp", nil, "certificate"},
		{"no such host", "http://no-such-host.invalid/mcp", nil, "no such host"},
		{"no response headers", "http://" + ln.Addr().String() + "/mcp", []string{"--header-timeout", "2s"}, "sent no response headers within 2s"},
		{"redirect to another origin", red.URL + "/mcp", nil, "another origin"},
		{"refused credentials", auth.URL + "/mcp", []string{"--header", "Authorization: Bearer ${TOKEN}"}, "HTTP 401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := startShimEnv(t, []string{"TOKEN=" + redirectSecret}, append(append([]string{"--name", "perm"}, tc.flags...), "--url", tc.url)...)
			start := time.Now()
			r, err := sh.call("initialize", initParams, 25*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			msg := gjson.GetBytes(r, "error.message").Str
			// The URL is named only as hidden: no part of it is shown
			// (issue 31), its host included.
			host := tc.url[strings.Index(tc.url, "://")+3 : strings.LastIndexByte(tc.url, '/')]
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "[URL hidden]") || strings.Contains(msg, host) {
				t.Errorf("got %q, want an error saying %q that names the URL as [URL hidden] and never shows %s", msg, tc.want, host)
			}
			if took > 10*time.Second {
				t.Errorf("answered after %s, want at once (the cause, not the deadline)", took)
			}
			// The next call too, without waiting.
			start = time.Now()
			if r, err := sh.call("tools/list", "", 25*time.Second); err != nil || !strings.Contains(string(r), tc.want) || time.Since(start) > 5*time.Second {
				t.Errorf("second call after %s: %s, %v", time.Since(start), r, err)
			}
			// The record is written apart from the answers.
			rec := ""
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				rec = ""
				filepath.WalkDir(sh.StateDir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.Contains(p, "shims") {
						b, _ := os.ReadFile(p)
						rec += string(b)
					}
					return nil
				})
				if strings.Contains(rec, `"state":"failed"`) && strings.Contains(rec, tc.want) {
					break
				}
			}
			if !strings.Contains(rec, `"state":"failed"`) || !strings.Contains(rec, tc.want) {
				t.Errorf("state record: %s", rec)
			}
			if strings.Contains(rec+msg+sh.stderr.String(), redirectSecret) {
				t.Errorf("a secret leaked")
			}
		})
	}
}
