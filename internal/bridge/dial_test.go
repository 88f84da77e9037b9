//go:build unix

package bridge

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A Streamable HTTP server that allows a sessionless GET stream (it sends
// no endpoint event) is detected as Streamable HTTP within 3 s, and the
// finding is kept: the next Dial does not wait again.
func TestAutoDetectSessionlessGETStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
	}))
	defer srv.Close()
	d := newDialer(t, Options{URL: srv.URL + "/mcp", NoServerStream: true})
	for i, limit := range []time.Duration{4 * time.Second, time.Second} {
		start := time.Now()
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > limit {
			t.Errorf("dial %d took %s, want under %s", i, el, limit)
		}
		if d.Transport() != TransportHTTP {
			t.Errorf("detected %q", d.Transport())
		}
		cl := &client{t: t, c: c}
		if _, err := cl.callID([]byte("1"), "initialize", initParams, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

// A legacy server naming an endpoint on another origin is refused: the
// bridge would otherwise send the user's headers to a host they did not
// name.
func TestLegacyEndpointMustBeSameOrigin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: http://evil.example/message?sessionId=1\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	_, err := newDialer(t, Options{URL: srv.URL + "/sse"}).Dial(context.Background())
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("got %v, want a same-origin error", err)
	}
}
