package bridge

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/backoff"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// The SSE side of a Streamable HTTP session: response streams of POSTs,
// their resumption, and the optional GET stream.

// readPostStream reads the SSE answer to request x until its response,
// resuming with Last-Event-ID when the stream breaks before it (2025-06-18,
// "Resumability and Redelivery"; a server may also close it on purpose and
// ask the client to come back after retry:, SEP-1699). A dropped stream is
// not a cancellation. In the stateless era (2026-07-28) it is, and there
// is no resumption: the connection dies and the request is re-issued
// under a new id if at all (reissue.go); a subscriptions/listen stream is
// re-opened at once instead (relisten).
func (c *httpConn) readPostStream(x *exchange, resp *http.Response) {
	var lastID string
	var retry time.Duration
	ls := listenState{opened: time.Now()}
	for attempt := 0; ; attempt++ {
		progressFrom := lastID
		got, err := c.readStream(resp.Body, x.id, &lastID, &retry)
		resp.Body.Close()
		if got || x.ctx.Err() != nil || x.kind == jsonrpc.KindBatch {
			return // a batch (2025-03-26 only) has no one response to wait for
		}
		why := "the stream ended"
		if err != nil && err != io.EOF {
			why = describeErr(err)
		}
		if x.cid != nil && x.method == "subscriptions/listen" {
			var ok bool
			if resp, ok = c.relisten(x, &ls, retry); ok {
				continue
			}
			return
		}
		if x.cid != nil {
			// 2026-07-28: no resumption, and the closed stream cancelled
			// the request at the server (reissue.go).
			c.die(fmt.Sprintf("connection lost: the response stream of request %s closed before its response (%s), which cancels the request", x.cid, why), nil)
			return
		}
		if lastID == "" {
			c.die(fmt.Sprintf("connection lost: the response stream of request %s broke before its response (%s)", x.id, why), nil)
			return
		}
		if lastID == progressFrom && attempt >= 3 {
			c.die(fmt.Sprintf("connection lost: the response stream of request %s keeps breaking without progress", x.id), nil)
			return
		}
		var ok bool
		resp, ok = c.reopen(lastID, retry)
		if !ok {
			return
		}
	}
}

// readStream delivers the messages of one SSE stream until the response
// to want (nil: until the end) and reports whether it came.
func (c *httpConn) readStream(body io.Reader, want []byte, lastID *string, retry *time.Duration) (bool, error) {
	r := newSSEReader(body, c.d.o.MaxMessage)
	for {
		ev, err := r.Next()
		if err != nil {
			return false, err
		}
		if ev.HasID {
			*lastID = ev.ID
		}
		if ev.Retry > 0 {
			*retry = ev.Retry
		}
		msg := c.message(ev)
		if msg == nil {
			continue
		}
		c.deliverMsg(msg)
		if want != nil && isResponseTo(msg, want) {
			return true, nil
		}
	}
}

// reopen GETs the endpoint with Last-Event-ID after the server's retry
// delay. On failure the connection dies and ok is false.
func (c *httpConn) reopen(lastID string, retry time.Duration) (*http.Response, bool) {
	if retry <= 0 {
		retry = c.d.o.ReconnectDelay
	}
	if !backoff.Sleep(c.ctx, nil, retry, nil) {
		return nil, false
	}
	c.log.Debug("resuming a response stream", "last_event_id", lastID, "after", retry)
	resp, why, refused := c.get(c.ctx, lastID)
	if resp == nil {
		if c.ctx.Err() == nil {
			c.die(why, nil)
		}
		_ = refused
		return nil, false
	}
	return resp, true
}

// get opens an SSE stream on the endpoint. It returns the 200 response,
// or nil and the reason the session is unusable.
func (c *httpConn) get(ctx context.Context, lastID string) (*http.Response, string, bool) {
	h := c.header(nil)
	h.Set("Accept", "text/event-stream")
	if lastID != "" {
		h.Set(hLastEventID, lastID)
	}
	carried := h.Get(hSessionID) != ""
	req, err := c.newRequest(ctx, http.MethodGet, nil, h)
	if err != nil {
		return nil, "cannot build request: " + describeErr(err), false
	}
	resp, err := c.d.o.Client.Do(req)
	if err != nil {
		if notSent(err) {
			return nil, "server unreachable: " + describeErr(err), false
		}
		return nil, "connection lost: " + describeErr(err), false
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode == http.StatusOK && ct == "text/event-stream" {
		return resp, "", false
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	status := httpStatus(resp.StatusCode, body)
	switch {
	case carried && sessionLost(resp.StatusCode, body, statelessHeader(h)):
		return nil, "session lost: " + status, false
	case unavailable(resp.StatusCode):
		return nil, "server unavailable: " + status, false
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return nil, "no GET stream (HTTP 405)", true
	}
	return nil, "GET stream refused: " + status, true
}

// startListen opens the optional GET stream once the session is
// initialized (2025-03-26, "Listening for Messages from the Server"), and
// keeps it open, resuming with Last-Event-ID, for the session's life. A
// drop it cannot repair means the server restarted or went away: the
// connection dies now, before the next call runs into it.
func (c *httpConn) startListen() {
	c.smu.Lock()
	if c.listening {
		c.smu.Unlock()
		return
	}
	c.listening = true
	c.smu.Unlock()
	if !c.begin() {
		return
	}
	opened := make(chan struct{})
	go func() {
		defer c.ops.Done()
		c.listen(opened)
	}()
	// The stream is opened before the client's next message goes out
	// (startListen runs before initialized's Send returns), so that the
	// server sees it before any request: a server that answers a resumed
	// request stream on the standalone GET (the conformance suite's
	// sse-retry does) must not mistake a late standalone GET for the
	// resumption. A server slow to answer the GET holds the session up
	// for one second at most.
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C:
	case <-c.listenCtx.Done():
	}
}

// listen keeps the standalone GET stream open; opened is closed once the
// first GET has been answered (or refused).
func (c *httpConn) listen(opened chan struct{}) {
	var lastID string
	var retry time.Duration
	for first := true; ; first = false {
		resp, why, benign := c.get(c.listenCtx, lastID)
		if first {
			close(opened)
		}
		if resp == nil {
			if c.listenCtx.Err() != nil {
				return
			}
			if benign {
				c.log.Debug("no server-to-client stream", "why", c.red.String(why))
				return
			}
			c.die(why, nil)
			return
		}
		_, err := c.readStream(resp.Body, nil, &lastID, &retry)
		resp.Body.Close()
		if c.listenCtx.Err() != nil {
			return
		}
		c.log.Debug("GET stream dropped; reopening", "error", err)
		d := retry
		if d <= 0 {
			d = c.d.o.ReconnectDelay
		}
		if !backoff.Sleep(c.listenCtx, nil, d, nil) {
			return
		}
	}
}
