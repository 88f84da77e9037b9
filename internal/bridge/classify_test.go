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
			if got := sessionLost(tc.status, []byte(tc.body)); got != tc.want {
				t.Errorf("sessionLost(%d, %q) = %v, want %v", tc.status, tc.body, got, tc.want)
			}
		})
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
