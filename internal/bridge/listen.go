package bridge

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/backoff"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// A subscriptions/listen stream of the stateless era (2026-07-28) lasts
// until the client cancels it; "the underlying transport closes (HTTP
// timeout, TCP disconnect...)" also ends it, and "a transport close with
// no response is an unexpected disconnect that the client may reconnect".
// The bridge reconnects it itself, as a new request with a new id
// (reissue.go), without ending the connection: a listen stream that an
// intermediary's idle timeout or the server closed must not cost the
// other calls in flight their answers. A server that is gone fails the
// new POST, and the connection dies as for any request.

// Reopen limits: a stream the server keeps closing within listenStable of
// opening it is re-opened maxQuickListens-1 times in a row, the waits
// growing (the server's retry:, else ReconnectDelay, times the count);
// then the client gets one error for it.
const (
	listenStable    = 10 * time.Second
	maxQuickListens = 3
)

// listenState is what relisten keeps across the reopenings of one stream.
type listenState struct {
	opened time.Time
	quick  int // closed within listenStable of opening, in a row
}

// relisten re-opens the listen stream of x under a new id after it
// closed without a response. It returns the new stream, or ok false
// when x has had its answer (the error that ends it) or c is dying.
func (c *httpConn) relisten(x *exchange, ls *listenState, retry time.Duration) (*http.Response, bool) {
	if time.Since(ls.opened) < listenStable {
		ls.quick++
	} else {
		ls.quick = 0
	}
	if ls.quick >= maxQuickListens {
		msg := fmt.Sprintf("remote MCP server %s closed this subscriptions/listen stream %d times in a row, each time within %s of opening it; mcp-heal stopped re-opening it: send subscriptions/listen again to receive its notifications", c.d.target, ls.quick, listenStable)
		c.log.Warn("gave up re-opening a listen stream the server keeps closing", "id", string(x.cid), "times", ls.quick)
		c.deliverMsg(jsonrpc.ErrorReply(x.id, jsonrpc.CodeInternalError, msg, map[string]any{"reason": "listen-closed", "attempts": ls.quick}))
		return nil, false
	}
	d := retry
	if d <= 0 {
		d = c.d.o.ReconnectDelay
	}
	if !backoff.Sleep(x.ctx, nil, d*time.Duration(max(ls.quick, 1)), nil) || c.isDying() {
		// Dying (another stream found the server gone): the shim
		// re-sends it on the next connection (reissue.go).
		return nil, false
	}
	wire := c.d.lost.newID()
	c.smu.Lock()
	delete(c.pending, string(x.id))
	if idEqual(x.id, x.cid) {
		c.subs++
	} else {
		delete(c.wire, string(x.id))
	}
	x.body = jsonrpc.ReplaceID(x.body, wire)
	x.id = wire
	c.pending[string(wire)] = x
	if c.wire == nil {
		c.wire = map[string][]byte{}
	}
	c.wire[string(wire)] = x.cid
	c.smu.Unlock()
	c.log.Debug("re-opening a listen stream under a new id", "id", string(x.cid), "new_id", string(wire))

	h := c.header(x)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	req, err := c.newRequest(x.ctx, http.MethodPost, x.body, h)
	if err != nil {
		c.die("cannot build request: "+describeErr(err), nil)
		return nil, false
	}
	resp, err := c.d.o.Client.Do(req)
	if err != nil {
		if x.ctx.Err() == nil {
			if notSent(err) {
				c.die("server unreachable: "+describeErr(err), nil)
			} else {
				c.die("connection lost: "+describeErr(err), nil)
			}
		}
		return nil, false
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode == http.StatusOK && ct == "text/event-stream" {
		ls.opened = time.Now()
		return resp, true
	}
	// Any other answer is the listen's own (an error, or a result that
	// ends it), or says the server is down.
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case unavailable(resp.StatusCode):
		c.die("server unavailable: "+httpStatus(resp.StatusCode, body), nil)
	case isResponseTo(body, x.id):
		c.deliverMsg(oneLine(body))
	default:
		c.deliverMsg(c.httpError(x, resp.StatusCode, body))
	}
	return nil, false
}
