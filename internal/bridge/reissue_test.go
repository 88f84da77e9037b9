package bridge

import (
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// A request of the stateless era that a dead connection lost goes out on
// the next one under a new id; what comes back under that id (the
// response, a listen stream's subscriptionId) and what the client sends
// about it (notifications/cancelled) are translated both ways. A request
// of the handshake era, or one that was not lost, keeps its id.
func TestReissueMapsIDs(t *testing.T) {
	d, err := New(Options{URL: "http://127.0.0.1:1/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	send := func(c *httpConn, line string) *exchange {
		m, err := jsonrpc.Peek([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		x := &exchange{body: []byte(line), kind: m.Kind, method: m.Method, id: m.ID}
		c.track(x)
		return x
	}
	old := newHTTPConn(d)
	send(old, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{},`+meta+`}}`)
	send(old, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a",`+meta+`}}`)
	send(old, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"h"}}`) // handshake era
	old.die("connection lost: test", nil)
	old.Close()

	c := newHTTPConn(d)
	defer c.Close()
	l := send(c, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{},`+meta+`}}`)
	a := send(c, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a",`+meta+`}}`)
	h := send(c, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"h"}}`)
	n := send(c, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"n",`+meta+`}}`)
	if string(l.id) == "7" || string(a.id) == "8" || string(l.id) == string(a.id) {
		t.Fatalf("lost requests kept their ids or share one: %s %s", l.id, a.id)
	}
	if string(l.cid) != "7" || string(a.cid) != "8" {
		t.Errorf("client ids: %s %s", l.cid, a.cid)
	}
	if string(h.id) != "9" || string(n.id) != "10" {
		t.Errorf("requests that were not lost changed ids: %s %s", h.id, n.id)
	}
	if string(a.body) != `{"jsonrpc":"2.0","id":`+string(a.id)+`,"method":"tools/call","params":{"name":"a",`+meta+`}}` {
		t.Errorf("re-issued body: %s", a.body)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":` + string(a.id) + `,"result":{}}`, `{"jsonrpc":"2.0","id":8,"result":{}}`},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(l.id) + `}}}`,
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`},
		{`{"jsonrpc":"2.0","id":10,"result":{}}`, `{"jsonrpc":"2.0","id":10,"result":{}}`},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`},
	} {
		if got := string(c.clientIDs([]byte(tc.in))); got != tc.want {
			t.Errorf("clientIDs(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// The client's cancellation of a stateless-era request closes its
	// stream (under whichever id it went out); others are sent on.
	if c.cancelStream([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)) {
		t.Errorf("a handshake-era request's cancellation was not sent on")
	}
	if !c.cancelStream([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`)) || n.ctx.Err() == nil {
		t.Errorf("the cancelled request's stream is still open")
	}
	if a.ctx.Err() != nil || l.ctx.Err() != nil {
		t.Errorf("a cancellation closed another request's stream")
	}
	// Answered: the mapping is gone.
	c.settled(a)
	if got := string(c.clientIDs([]byte(`{"jsonrpc":"2.0","id":` + string(a.id) + `,"result":{}}`))); got != `{"jsonrpc":"2.0","id":`+string(a.id)+`,"result":{}}` {
		t.Errorf("after the answer: %s", got)
	}
	if d.lost.take("8") || d.lost.take("7") {
		t.Errorf("re-issued ids still noted as lost")
	}
}
