//go:build unix

package bridge

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// sink is a server that records the headers of every request it gets.
type sink struct {
	*httptest.Server
	mu  sync.Mutex
	got []http.Header
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.got = append(s.got, r.Header.Clone())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"sink","version":"1"}}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) requests() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// redirector answers every request (or only POSTs, when postOnly; a GET
// then gets 405, as from a Streamable HTTP server without a GET stream)
// with a 307 to target.
func redirector(t *testing.T, tls, postOnly bool, target func() string) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if postOnly && r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		http.Redirect(w, r, target(), http.StatusTemporaryRedirect)
	})
	var s *httptest.Server
	if tls {
		s = httptest.NewTLSServer(h)
	} else {
		s = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

const redirectSecret = "redirect-secret-0815"

// Credentials never follow a redirect to another origin (another port,
// another host, or https to http): the bridge refuses the redirect and
// says why, and the other server gets nothing. A redirect within the same
// origin is still followed.
func TestRedirectKeepsCredentials(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tls      bool
		host     string // the redirect target's host name
		want     string
		postOnly bool
	}{
		{"another port", false, "127.0.0.1", "another origin", false},
		{"another host", false, "localhost", "another origin", false},
		{"https to http", true, "127.0.0.1", "from https to http", false},
		{"another port on POST", false, "127.0.0.1", "another origin", true},
		{"https to http on POST", true, "127.0.0.1", "from https to http", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newSink(t)
			port := other.URL[strings.LastIndexByte(other.URL, ':')+1:]
			red := redirector(t, tc.tls, tc.postOnly, func() string { return "http://" + tc.host + ":" + port + "/mcp?token=" + redirectSecret })
			d := newDialer(t, Options{URL: red.URL + "/mcp", Transport: TransportHTTP, NoServerStream: true,
				Header: http.Header{"Authorization": {"Bearer " + redirectSecret}, "X-Api-Key": {redirectSecret}}})
			if tc.tls {
				trust(d, red)
			}
			var msg string
			c, err := d.Dial(context.Background())
			if err != nil {
				msg = err.Error()
			} else {
				defer c.Close()
				cl := &client{t: t, c: c}
				res, err := cl.callID([]byte("1"), "initialize", initParams, 10*time.Second)
				if err != nil {
					msg = err.Error()
				} else {
					msg = gjson.GetBytes(res, "error.message").String()
				}
			}
			// The other origin is named, but not the host of the URL
			// the user gave (redact.URL: no part of it is shown).
			named := tc.host + ":" + port
			if tc.host == "127.0.0.1" {
				named = ":" + port
			}
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, named) || strings.Contains(msg, "127.0.0.1") {
				t.Errorf("got %q, want an error saying %q and naming %s, not 127.0.0.1", msg, tc.want, named)
			}
			if strings.Contains(msg, redirectSecret) {
				t.Errorf("the error shows the secret: %q", msg)
			}
			if got := other.requests(); len(got) > 0 {
				t.Errorf("the other origin got %d requests (headers %v)", len(got), got[0])
			}
		})
	}
	t.Run("same origin", func(t *testing.T) {
		var srv *httptest.Server
		var mu sync.Mutex
		var auth []string
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			if r.URL.Path == "/old" {
				http.Redirect(w, r, srv.URL+"/mcp", http.StatusPermanentRedirect)
				return
			}
			if r.Method == http.MethodGet {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
		}))
		defer srv.Close()
		d := newDialer(t, Options{URL: srv.URL + "/old", NoServerStream: true, Header: http.Header{"Authorization": {"Bearer " + redirectSecret}}})
		cl := dialClient(t, d)
		res, err := cl.callID([]byte("1"), "initialize", initParams, 10*time.Second)
		if err != nil || !gjson.GetBytes(res, "result.protocolVersion").Exists() {
			t.Fatalf("got %s, %v", res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range auth {
			if a != "Bearer "+redirectSecret {
				t.Errorf("a same-origin request lacked the header: %q", auth)
			}
		}
	})
}

// trust makes d's client trust srv's self-signed certificate.
func trust(d *Dialer, srv *httptest.Server) {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tr := d.o.Client.Transport.(*http.Transport)
	tr.TLSClientConfig = tr.TLSClientConfig.Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	}
	tr.TLSClientConfig.RootCAs = pool
}
