//go:build unix

package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

func newDialer(t testing.TB, o Options) *Dialer {
	t.Helper()
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// tool is how each server's echo-like tool is called.
type tool struct{ name, arg, want string }

func echoTool(kind string) tool {
	switch kind {
	case goSDKStateful, goSDKStateless:
		return tool{"test_simple_text", "x", "simple text"}
	}
	return tool{"echo", "message", ""}
}

// dialTool dials a new session, initializes it and calls kind's echo
// tool with text, failing t if the call fails; it returns the session.
func dialTool(t *testing.T, d *Dialer, kind, text string) *client {
	t.Helper()
	cl := dialClient(t, d)
	cl.initialize()
	if err := cl.tool(kind, text); err != nil {
		t.Fatal(err)
	}
	return cl
}

func (cl *client) tool(kind, text string) error {
	tl := echoTool(kind)
	if tl.want != "" {
		text = tl.want
	}
	return cl.echo(tl.name, tl.arg, text)
}

func undelivered(ex upstream.Exit, id string) bool {
	for _, u := range ex.Undelivered {
		if string(u) == id {
			return true
		}
	}
	return false
}

// A request that meets a restarted server's "unknown session" answer kills
// the Conn with a precise reason and lists the request as not processed; a
// new Dial then works. server-everything answers 400, the Go SDK 404.
func TestStaleSessionIsReportedAndUndelivered(t *testing.T) {
	for _, tc := range []struct {
		kind, reason string
	}{
		{everythingHTTP, "session lost: HTTP 400, the server said: «Bad Request: No valid session ID provided»"},
		{goSDKStateful, "session lost: HTTP 404, the server said: «session not found»"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			srv := newServer(t, tc.kind)
			d := newDialer(t, Options{URL: srv.URL, NoServerStream: true})
			cl := dialClient(t, d)
			res := cl.initialize()
			if v := gjson.GetBytes(res, "result.protocolVersion").Str; v == "" {
				t.Fatalf("initialize result without protocolVersion: %s", res)
			}
			if err := cl.tool(tc.kind, "before"); err != nil {
				t.Fatal(err)
			}
			if got := d.Transport(); got != TransportHTTP {
				t.Errorf("auto detected %q, want %q", got, TransportHTTP)
			}
			srv.Restart()
			_, err := cl.callID([]byte(`"after-restart"`), "tools/call", `{"name":"`+echoTool(tc.kind).name+`","arguments":{}}`, 20*time.Second)
			var died *errDied
			if !errors.As(err, &died) {
				t.Fatalf("call on a stale session: got %v, want the connection to die", err)
			}
			if died.ex.Reason != tc.reason {
				t.Errorf("exit reason %q, want %q", died.ex.Reason, tc.reason)
			}
			if !undelivered(died.ex, `"after-restart"`) {
				t.Errorf("undelivered %q, want it to hold \"after-restart\"", died.ex.Undelivered)
			}
			if err := cl.c.Send([]byte(initialized)); !errors.Is(err, ErrDead) {
				t.Errorf("send on a dead conn: got %v, want ErrDead", err)
			}
			dialTool(t, d, tc.kind, "after")
		})
	}
}

// With the GET stream open, a restart is noticed while idle: the Conn dies
// on its own (the stream drops; reopening it meets "unknown session" or a
// refused connection), before any call runs into it.
func TestGetStreamNoticesRestartWhileIdle(t *testing.T) {
	for _, kind := range []string{everythingHTTP, goSDKStateful} {
		t.Run(kind, func(t *testing.T) {
			srv := newServer(t, kind)
			d := newDialer(t, Options{URL: srv.URL})
			cl := dialTool(t, d, kind, "x")
			time.Sleep(200 * time.Millisecond) // let the GET stream open
			srv.Restart()
			ex := cl.waitDead(15 * time.Second)
			if !strings.HasPrefix(ex.Reason, "session lost: HTTP 4") && !strings.HasPrefix(ex.Reason, "server unreachable: ") {
				t.Errorf("exit reason %q, want session lost or server unreachable", ex.Reason)
			}
			dialTool(t, d, kind, "y")
		})
	}
}

// Legacy HTTP+SSE: auto detection finds it; a restart closes the stream,
// which kills the Conn; a new Dial opens a new session.
func TestLegacySSE(t *testing.T) {
	srv := newServer(t, everythingSSE)
	d := newDialer(t, Options{URL: srv.URL})
	cl := dialClient(t, d)
	if got := d.Transport(); got != TransportSSE {
		t.Fatalf("auto detected %q, want %q", got, TransportSSE)
	}
	cl.initialize()
	if err := cl.tool(everythingSSE, "legacy"); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	ex := cl.waitDead(10 * time.Second)
	if !strings.HasPrefix(ex.Reason, "session lost: SSE stream closed") {
		t.Errorf("exit reason %q, want the SSE stream closing", ex.Reason)
	}
	dialTool(t, d, everythingSSE, "again")
	// --transport sse on a Streamable HTTP server is a clear Dial error.
	srvHTTP := newServer(t, goSDKStateful)
	_, err := newDialer(t, Options{URL: srvHTTP.URL, Transport: TransportSSE}).Dial(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not a legacy SSE endpoint") {
		t.Errorf("dial sse on a streamable server: got %v", err)
	}
}

// A server that is down fails Dial fast with a descriptive error (the shim
// backs off and redials); a request in flight when it goes away, or sent
// to it while it is down, kills the Conn with the right reason.
func TestServerDown(t *testing.T) {
	srv := newServer(t, goSDKStateful)
	d := newDialer(t, Options{URL: srv.URL, NoServerStream: true})
	cl := dialClient(t, d)
	cl.initialize()
	srv.Stop()
	_, err := cl.callID([]byte("77"), "tools/list", "", 10*time.Second)
	var died *errDied
	if !errors.As(err, &died) {
		t.Fatalf("call to a stopped server: got %v, want the connection to die", err)
	}
	if died.ex.Reason != "server unreachable: connection refused" {
		t.Errorf("exit reason %q", died.ex.Reason)
	}
	if !undelivered(died.ex, "77") {
		t.Errorf("a refused connection sent nothing: undelivered %q, want 77", died.ex.Undelivered)
	}
	start := time.Now()
	_, err = d.Dial(context.Background())
	want := "cannot reach [URL hidden]: connection refused" // no part of the URL (issue 31)
	if err == nil || err.Error() != want {
		t.Errorf("dial a stopped server: got %v, want %q", err, want)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("dial a stopped server took %s", el)
	}
	srv.Start()
	dialTool(t, d, goSDKStateful, "")
}

// The 2026-07-28 stateless era passes through: server/discover, no
// session, Mcp-Method/Mcp-Name headers (the Go SDK rejects requests
// without them); 404 with -32601 is an unknown method, not session loss;
// a restart needs no new session.
func TestStatelessEra(t *testing.T) {
	srv := newServer(t, goSDKStateless)
	d := newDialer(t, Options{URL: srv.URL})
	cl := dialClient(t, d)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bridge-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	res, err := cl.call("server/discover", "{"+meta+"}")
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.GetBytes(res, "result.supportedVersions").Exists() {
		t.Fatalf("server/discover: %s", res)
	}
	call := func(name string) ([]byte, error) {
		return cl.call("tools/call", `{"name":"`+name+`","arguments":{},`+meta+`}`)
	}
	res, err = call("test_simple_text")
	if err != nil || !strings.Contains(gjson.GetBytes(res, "result.content.0.text").Str, "simple text") {
		t.Fatalf("tools/call: %s %v", res, err)
	}
	// SEP-2243: the server rejects a call of a tool with an x-mcp-header
	// argument unless Mcp-Param-Region mirrors it; tools/list tells which.
	if _, err := cl.call("tools/list", "{"+meta+"}"); err != nil {
		t.Fatal(err)
	}
	res, err = cl.call("tools/call", `{"name":"test_x_mcp_header","arguments":{"region":"eu-west 1"},`+meta+`}`)
	if err != nil || gjson.GetBytes(res, "result.content.0.text").Str != "region=eu-west 1" {
		t.Fatalf("tools/call with an x-mcp-header argument: %s %v", res, err)
	}
	res, err = cl.call("no/such/method", "{"+meta+"}")
	if err != nil {
		t.Fatal(err)
	}
	if c := gjson.GetBytes(res, "error.code").Int(); c != -32601 {
		t.Errorf("unknown method: got %s, want a -32601 error", res)
	}
	srv.Restart()
	res, err = call("test_simple_text")
	if err != nil || !strings.Contains(gjson.GetBytes(res, "result.content.0.text").Str, "simple text") {
		t.Fatalf("tools/call after a restart: %s %v", res, err)
	}
	select {
	case <-cl.c.Done():
		t.Errorf("stateless conn died: %s", cl.c.Exit().Reason)
	default:
	}
}

// A response stream the server closes mid-call (SEP-1699, with retry:) is
// resumed with GET and Last-Event-ID, and the response arrives: a dropped
// stream is not a cancellation.
func TestResumeWithLastEventID(t *testing.T) {
	srv := newServer(t, multiNS)
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cl := dialClient(t, newDialer(t, Options{URL: srv.URL + "/r/mcp", Logger: log}))
	cl.initialize()
	for i := 0; i < 3; i++ {
		res, err := cl.call("tools/call", fmt.Sprintf(`{"name":"reconnect","arguments":{"text":"t%d"}}`, i))
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(res, "result.content.0.text").Str; got != fmt.Sprintf("resumed:t%d", i) {
			t.Fatalf("call %d: got %s", i, res)
		}
	}
	select {
	case <-cl.c.Done():
		t.Fatalf("conn died: %s", cl.c.Exit().Reason)
	default:
	}
	if n := strings.Count(logs.String(), "resuming a response stream"); n < 3 {
		t.Errorf("resumed %d times, want 3:\n%s", n, logs.String())
	}
}

// 401 is never session loss: a request refused with 401 in a live session
// (a token that expired) gets a clear error naming the URL, the Conn lives
// on, and the token never appears in it. A 401 to Dial's probe (the
// configured credentials are refused from the start) is a permanent
// DialError, which the shim reports at once.
func TestUnauthorizedIsNotSessionLoss(t *testing.T) {
	srv := newServer(t, multiNS)
	h, err := ParseHeaders([]string{"Authorization: Bearer ${T}"}, func(string) string { return "wrong-token-999" })
	if err != nil {
		t.Fatal(err)
	}
	_, err = newDialer(t, Options{URL: srv.URL + "/auth/mcp", Header: h}).Dial(context.Background())
	var de *DialError
	if !errors.As(err, &de) || !de.Permanent() || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "[URL hidden]") || strings.Contains(err.Error(), "/auth/mcp") || strings.Contains(err.Error(), "wrong-token-999") {
		t.Errorf("dial with a refused token: got %v, want a permanent error with HTTP 401, the URL hidden", err)
	}

	// Only POSTs are refused: the probe passes, as in a session whose
	// token expired.
	postAuth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		http.Error(w, "unauthorized: bad token "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer postAuth.Close()
	cl := dialClient(t, newDialer(t, Options{URL: postAuth.URL + "/mcp", Header: h}))
	res, err := cl.call("initialize", initParams)
	if err != nil {
		t.Fatal(err)
	}
	msg := gjson.GetBytes(res, "error.message").Str
	if !strings.Contains(msg, "HTTP 401") || !strings.Contains(msg, "[URL hidden]") || strings.Contains(msg, "127.0.0.1") {
		t.Errorf("error %q: want HTTP 401, the URL hidden", msg)
	}
	if strings.Contains(string(res), "wrong-token-999") {
		t.Errorf("the token leaked into the error: %s", res)
	}
	select {
	case <-cl.c.Done():
		t.Errorf("conn died on a 401: %s", cl.c.Exit().Reason)
	default:
	}
}
