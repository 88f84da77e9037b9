package bridge

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// FuzzSessionLost: any status and body classify without panicking, and
// 401/403 are never session loss.
func FuzzSessionLost(f *testing.F) {
	f.Add(400, []byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":1}`))
	f.Add(404, []byte("session not found"))
	f.Add(401, []byte(`{"error":{"code":-32001}}`))
	f.Add(404, []byte(`{"error":{"code":-32601,"message":"x"}}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		for _, stateless := range []bool{false, true} {
			lost := sessionLost(status, body, stateless)
			if lost && (status == 401 || status == 403 || status < 400 || status >= 500) {
				t.Fatalf("sessionLost(%d, %q, %v) = true", status, body, stateless)
			}
			if stateless && lost && !sessionLost(status, body, false) {
				t.Fatalf("sessionLost(%d, %q): lost in the stateless era only", status, body)
			}
		}
		if s := bodyText(body); len(s) > 210 || strings.ContainsAny(s, "\r\n") {
			t.Fatalf("bodyText(%q) = %q", body, s)
		}
	})
}

// FuzzParamHeaders: whatever a server puts in tools/list and a client in
// tools/call, the Mcp-Param-* headers are valid header lines.
func FuzzParamHeaders(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"t","inputSchema":{"properties":{"region":{"type":"string","x-mcp-header":"Region"},"o":{"properties":{"n":{"x-mcp-header":"N"}}}}}}]}`),
		[]byte(`{"params":{"name":"t","arguments":{"region":"eu\nwest","o":{"n":5}}}}`))
	f.Fuzz(func(t *testing.T, list, call []byte) {
		var p paramHeaders
		if gjson.ValidBytes(list) {
			p.learn(gjson.ParseBytes(list))
		}
		if !gjson.ValidBytes(call) {
			return
		}
		for k, v := range p.headers(call) {
			if !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("bad header %q: %q", k, v)
			}
		}
	})
}
