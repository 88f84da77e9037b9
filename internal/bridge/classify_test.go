package bridge

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"testing"
)

func TestSessionLost(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		// server-everything streamableHttp
		{400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":3}`, true},
		// TypeScript SDK transport
		{404, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, true},
		{400, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, true},
		{400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`, true},
		// Go SDK
		{404, "session not found\n", true},
		// Python SDK
		{400, "Bad Request: No valid session ID provided", true},
		// legacy SSE servers
		{400, "No transport found for sessionId abc", true},
		{404, "Could not find session", true},
		{410, "session expired", true},
		// not session loss
		{401, `{"error":"invalid_token","message":"session token expired"}`, false},
		{403, "session user mismatch", false},
		{404, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: \"x/y\""}}`, false},
		{400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params"}}`, false},
		{400, "Accept must contain both 'application/json' and 'text/event-stream'", false},
		{413, "request body exceeds 1000 bytes", false},
		{429, "slow down", false},
		{500, "session not found", false},
		{200, "", false},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.body), func(t *testing.T) {
			if got := sessionLost(tc.status, []byte(tc.body), false); got != tc.want {
				t.Errorf("sessionLost(%d, %q) = %v, want %v", tc.status, tc.body, got, tc.want)
			}
		})
	}
}

// In the stateless era (2026-07-28) -32001 alone is no evidence of a lost
// session: it was the draft's HeaderMismatch (now -32020), and the era has
// no sessions. The handshake era keeps its rule (-32001 is the TypeScript
// SDK's "Session not found").
func TestSessionLostByEra(t *testing.T) {
	for _, tc := range []struct {
		status          int
		body            string
		handshake, stls bool
	}{
		// -32001 alone: the old draft's HeaderMismatch.
		{400, `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"Mcp-Name header value 'a' does not match body value 'b'"}}`, true, false},
		{409, `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"conflict"}}`, true, false},
		{400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001}}`, true, false},
		// The words still count in both eras (they are not -32001 alone).
		{400, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, true, true},
		{404, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, true, true},
		// Never session loss in either era.
		{401, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, false, false},
		{404, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`, false, false},
		{400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch"}}`, false, false},
	} {
		for _, era := range []struct {
			stateless bool
			want      bool
		}{{false, tc.handshake}, {true, tc.stls}} {
			if got := sessionLost(tc.status, []byte(tc.body), era.stateless); got != era.want {
				t.Errorf("sessionLost(%d, %s, stateless=%v) = %v, want %v", tc.status, tc.body, era.stateless, got, era.want)
			}
		}
	}
}

func TestDescribeErrHidesURL(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "http://h/mcp?token=SECRET", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	if got := describeErr(err); got != "connection refused" {
		t.Errorf("describeErr = %q", got)
	}
	if !notSent(err) {
		t.Errorf("a refused dial was sent")
	}
	if notSent(errors.New("EOF")) {
		t.Errorf("an EOF after writing was not sent")
	}
}

func TestIDEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`1`, `1`, true},
		{`"a"`, `"a"`, true},
		{`"\u0061"`, `"a"`, true},
		{`1`, `"1"`, false},
		{`2`, `1`, false},
	} {
		if got := idEqual([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("idEqual(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestBodyText(t *testing.T) {
	html := "<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Error</title></head>\n<body>\n<pre>Cannot POST /sse</pre>\n</body>\n</html>\n"
	if got := bodyText([]byte(html)); got != "Error Cannot POST /sse" {
		t.Errorf("bodyText(html) = %q", got)
	}
	if got := bodyText([]byte(`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`)); got != "Session not found" {
		t.Errorf("bodyText(json) = %q", got)
	}
}
