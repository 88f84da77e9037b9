package bridge

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// The stateless era (2026-07-28) over Streamable HTTP: "Closing the SSE
// response stream MUST be treated by the server as cancellation of that
// request", and "Resumable SSE streams via Last-Event-ID are not
// supported". A request whose stream was lost is therefore gone at the
// server, and whatever re-issues it sends a new request with a new id.
//
// The bridge keeps that rule below the shim, which re-sends a request
// under the client's own id when its retry policy allows (read-only, or
// never delivered): when a connection of the stateless era dies, the
// requests it had in flight are noted on the Dialer as lost; when one of
// them is sent again, on the next connection, it goes out under a fresh
// id, and what the server sends back under that id (the response; for a
// subscriptions/listen, the subscriptionId of every notification on its
// stream) reaches the client under the client's own id.

// maxLost bounds the lost ids a Dialer remembers: the shim re-sends at
// once what it re-sends, and never the rest.
const maxLost = 1024

// subscriptionIDPath is where a notification of a subscriptions/listen
// stream names its subscription: the listen request's id.
var subscriptionIDPath = "params._meta." + gjson.Escape("io.modelcontextprotocol/subscriptionId")

// lostIDs is the Dialer's record of the stateless-era requests whose
// connection died under them.
type lostIDs struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string
	n     atomic.Int64
}

func (l *lostIDs) add(ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ids == nil {
		l.ids = map[string]bool{}
	}
	for _, id := range ids {
		if l.ids[id] {
			continue
		}
		l.ids[id] = true
		l.order = append(l.order, id)
	}
	for len(l.order) > maxLost {
		delete(l.ids, l.order[0])
		l.order = l.order[1:]
	}
}

// take reports whether id was lost, and forgets it.
func (l *lostIDs) take(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ids[id] {
		return false
	}
	delete(l.ids, id)
	for i, o := range l.order {
		if o == id {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
	return true
}

// newID is a request id no client uses: a string in mcp-heal's own name
// space, distinct from the shim's injected ids.
func (l *lostIDs) newID() []byte {
	return fmt.Appendf(nil, `"mcp-heal-reissue-%d"`, l.n.Add(1))
}

// statelessBody reports whether a request is of the stateless era: it
// carries a per-request protocol version of 2026-07-28 or later.
func statelessBody(body []byte) bool {
	v := gjson.GetBytes(body, metaVersionPath)
	return v.Type == gjson.String && v.Str >= statelessVersion
}

// track notes a stateless-era request about to be sent on c, and gives it
// a new id when a previous connection lost it. Called before its exchange
// starts.
func (c *httpConn) track(x *exchange) {
	x.ctx = c.ctx
	if x.kind != jsonrpc.KindRequest || len(x.id) == 0 || !statelessBody(x.body) {
		return
	}
	x.ctx, x.cancel = context.WithCancel(c.ctx)
	x.cid = x.id
	if c.d.lost.take(string(x.id)) {
		wire := c.d.lost.newID()
		c.log.Debug("re-issuing a request whose stream was lost under a new id", "method", x.method, "id", string(x.id), "new_id", string(wire))
		x.body = jsonrpc.ReplaceID(x.body, wire)
		x.id = wire
	}
	c.smu.Lock()
	if c.pending == nil {
		c.pending = map[string]*exchange{}
	}
	c.pending[string(x.id)] = x
	if !idEqual(x.id, x.cid) {
		if c.wire == nil {
			c.wire = map[string][]byte{}
		}
		c.wire[string(x.id)] = x.cid
		if x.method == "subscriptions/listen" {
			c.subs++
		}
	}
	c.smu.Unlock()
}

// settled forgets a request whose exchange ended while c is alive: it
// was answered, or cancelled. One that ended with c dying was noted by
// noteLost.
func (c *httpConn) settled(x *exchange) {
	if x.cid == nil {
		return
	}
	cancelled := x.ctx.Err() != nil && c.ctx.Err() == nil // by the client
	x.cancel()
	if c.isDying() && !cancelled {
		return
	}
	c.smu.Lock()
	delete(c.pending, string(x.id))
	if !idEqual(x.id, x.cid) {
		delete(c.wire, string(x.id))
		if x.method == "subscriptions/listen" {
			c.subs--
		}
	}
	c.smu.Unlock()
}

// noteLost runs when c dies: every stateless-era request still in flight
// lost its stream, so if it is sent again it must be a new request.
func (c *httpConn) noteLost() {
	c.smu.Lock()
	ids := make([]string, 0, len(c.pending))
	for _, x := range c.pending {
		ids = append(ids, string(x.cid))
	}
	c.smu.Unlock()
	if len(ids) > 0 {
		c.d.lost.add(ids)
	}
}

// clientIDs rewrites what the server sent under a re-issued request's id
// to the client's own id: the response, and the subscriptionId of a
// listen stream's notifications. msg is returned as is otherwise.
func (c *httpConn) clientIDs(msg []byte) []byte {
	c.smu.Lock()
	n, subs := len(c.wire), c.subs
	c.smu.Unlock()
	if n == 0 {
		return msg
	}
	m, err := jsonrpc.PeekAnyText(msg)
	if err != nil {
		return msg
	}
	path, raw := "", []byte(nil)
	switch {
	case m.Kind == jsonrpc.KindResponse:
		path, raw = "id", m.ID
	case m.Kind == jsonrpc.KindNotification && subs > 0:
		r := gjson.GetBytes(msg, subscriptionIDPath)
		if !r.Exists() {
			return msg
		}
		path, raw = subscriptionIDPath, []byte(r.Raw)
	default:
		return msg
	}
	c.smu.Lock()
	cid := c.wire[string(raw)]
	c.smu.Unlock()
	if cid == nil {
		return msg
	}
	return replaceAt(msg, path, cid)
}

// cancelStream carries out the client's notifications/cancelled for a
// request of the stateless era in flight: on Streamable HTTP "closing the
// SSE response stream is itself the cancellation signal and no
// notifications/cancelled message is expected" (2026-07-28), so the
// bridge closes that request's stream and sends nothing. It reports
// whether it did; any other cancellation is POSTed as before.
func (c *httpConn) cancelStream(msg []byte) bool {
	r := gjson.GetBytes(msg, "params.requestId")
	if !r.Exists() {
		return false
	}
	c.smu.Lock()
	var x *exchange
	for _, p := range c.pending {
		if idEqual([]byte(r.Raw), p.cid) {
			x = p
			break
		}
	}
	c.smu.Unlock()
	if x == nil {
		return false
	}
	c.log.Debug("closing the stream of a request the client cancelled", "method", x.method, "id", string(x.cid))
	x.cancel()
	return true
}

// replaceAt returns a copy of msg with the JSON value at path replaced by
// raw; everything else stays byte for byte.
func replaceAt(msg []byte, path string, raw []byte) []byte {
	r := gjson.GetBytes(msg, path)
	if !r.Exists() || r.Index <= 0 || r.Index+len(r.Raw) > len(msg) {
		return msg
	}
	out := make([]byte, 0, len(msg)-len(r.Raw)+len(raw))
	out = append(out, msg[:r.Index]...)
	out = append(out, raw...)
	return append(out, msg[r.Index+len(r.Raw):]...)
}
