package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// Header names of the Streamable HTTP transport.
const (
	hSessionID   = "Mcp-Session-Id"
	hProtocol    = "MCP-Protocol-Version"
	hLastEventID = "Last-Event-ID"
	hMethod      = "Mcp-Method"
	hName        = "Mcp-Name"
)

// statelessVersion is the first protocol version of the stateless era
// (SEP-2575): no session, server/discover, per-request _meta and the
// Mcp-Method/Mcp-Name headers.
const statelessVersion = "2026-07-28"

var metaVersionPath = "params._meta." + gjson.Escape("io.modelcontextprotocol/protocolVersion")

// statelessHeader reports whether a request with headers h is of the
// stateless era: the MCP-Protocol-Version it carries (its own _meta
// version, or the session's) is 2026-07-28 or later (the versions are
// dates, so they order as strings).
func statelessHeader(h http.Header) bool { return h.Get(hProtocol) >= statelessVersion }

// httpConn is one Streamable HTTP session (MCP 2025-03-26 and later,
// "Transports", Streamable HTTP): every message is its own POST; responses
// come back as JSON or as an SSE stream; server-initiated messages also
// come on the optional GET stream.
type httpConn struct {
	base
	d *Dialer

	listenCtx    context.Context
	listenCancel context.CancelFunc

	smu       sync.Mutex // guards the session fields below
	sessionID string
	protoVer  string // negotiated by initialize
	metaVer   string // the last stateless-era request's _meta version
	initID    []byte
	listening bool
	toolLists map[string]bool // ids of tools/list requests in flight
	// The stateless era's requests in flight, by the id they were sent
	// under, and the client's ids of those re-issued under a new one
	// (subs of them subscriptions/listen): reissue.go.
	pending map[string]*exchange
	wire    map[string][]byte
	subs    int
}

func newHTTPConn(d *Dialer) *httpConn {
	c := &httpConn{d: d}
	ctx, cancel := context.WithCancel(context.Background())
	c.init(d.o.Logger, d.red, d.o.Grace, ctx, cancel)
	c.listenCtx, c.listenCancel = context.WithCancel(c.ctx)
	c.onDie = func() {
		c.listenCancel()
		c.noteLost()
	}
	return c
}

// exchange is one POSTed message.
type exchange struct {
	body   []byte
	kind   jsonrpc.Kind
	method string
	id     []byte
	// cid is the client's id of a request of the stateless era (id is
	// the one it is sent under: a new one when it is re-issued).
	cid []byte
	// ctx is the exchange's life: the connection's, or for a request of
	// the stateless era its own, which cancel ends when the client
	// cancels it (closing its stream is the cancellation, reissue.go).
	ctx    context.Context
	cancel context.CancelFunc
	// sent is closed once the server answered the POST's headers (or it
	// failed). Send waits for it for initialize (the session id comes
	// back in its headers) and for notifications and responses (which
	// the server answers at once with 202), so they reach the server in
	// the order the client sent them.
	sent chan struct{}
}

func (x *exchange) isInit() bool { return x.kind == jsonrpc.KindRequest && x.method == "initialize" }

// Send POSTs msg. A nil error means the message was handed to HTTP: its
// answer comes out of Recv, or the connection dies and Exit says whether
// the server refused it (Undelivered). ErrDead means it was not sent.
func (c *httpConn) Send(msg []byte) error {
	m, err := jsonrpc.Peek(msg)
	if err != nil {
		m = jsonrpc.Msg{} // not ours to judge: the server answers it
	}
	if !c.begin() {
		return ErrDead
	}
	x := &exchange{body: bytes.Clone(msg), kind: m.Kind, method: m.Method, id: bytes.Clone(m.ID)}
	c.track(x)
	if x.method == "notifications/cancelled" && c.cancelStream(x.body) {
		c.ops.Done()
		return nil
	}
	if x.isInit() || x.method == "tools/list" {
		c.smu.Lock()
		if x.isInit() {
			c.initID = x.id
		} else {
			if c.toolLists == nil {
				c.toolLists = map[string]bool{}
			}
			c.toolLists[string(x.id)] = true
		}
		c.smu.Unlock()
	}
	if x.isInit() || x.kind != jsonrpc.KindRequest {
		x.sent = make(chan struct{})
	}
	go func() {
		defer c.ops.Done()
		c.exchange(x)
	}()
	if x.sent != nil {
		<-x.sent
	}
	return nil
}

func (c *httpConn) newRequest(ctx context.Context, method string, body []byte, h http.Header) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.d.u.String(), rd)
	if err != nil {
		return nil, err
	}
	req.Header = h
	return req, nil
}

func (c *httpConn) exchange(x *exchange) {
	defer c.settled(x)
	signalled := false
	signal := func() {
		if x.sent != nil && !signalled {
			signalled = true
			close(x.sent)
		}
	}
	defer signal()

	h := c.header(x)
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	carried := h.Get(hSessionID) != ""
	ctx := x.ctx
	if x.kind != jsonrpc.KindRequest && x.kind != jsonrpc.KindBatch {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.d.o.PostTimeout)
		defer cancel()
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	})
	req, err := c.newRequest(ctx, http.MethodPost, x.body, h)
	if err != nil {
		c.die("cannot build request: "+describeErr(err), c.refusable(x))
		return
	}
	resp, err := c.d.o.Client.Do(req)
	if err != nil {
		if x.ctx.Err() != nil {
			return // closed, or cancelled by the client
		}
		var re *redirectError
		if errors.As(err, &re) {
			// Answered with a redirect the bridge will not follow: the
			// answer to this message, not the end of the session.
			if x.kind == jsonrpc.KindRequest {
				c.deliverMsg(jsonrpc.ErrorReply(x.id, jsonrpc.CodeInternalError, c.red.String("remote MCP server "+c.d.target+": "+re.msg), map[string]any{"reason": "redirect-refused"}))
			} else {
				c.log.Warn("a message was not delivered", "method", x.method, "err", re.msg)
			}
			return
		}
		if !wrote.Load() || notSent(err) {
			c.die("server unreachable: "+describeErr(err), c.refusable(x))
		} else {
			c.die("connection lost: "+describeErr(err), nil)
		}
		return
	}
	defer resp.Body.Close()

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if x.isInit() {
			if sid := resp.Header.Get(hSessionID); sid != "" {
				c.smu.Lock()
				c.sessionID = sid
				c.smu.Unlock()
			}
		}
		if x.method == "notifications/initialized" {
			// Send returns once the standalone stream is open
			// (startListen): see there.
			c.answered(x, resp)
			signal()
			return
		}
		signal()
		c.answered(x, resp)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	status := httpStatus(resp.StatusCode, body)
	switch {
	case carried && sessionLost(resp.StatusCode, body, statelessHeader(h)):
		c.die("session lost: "+status, c.refusable(x))
	case unavailable(resp.StatusCode):
		var refused []byte
		if resp.StatusCode == http.StatusServiceUnavailable {
			refused = c.refusable(x)
		}
		c.die("server unavailable: "+status, refused)
	case x.kind == jsonrpc.KindRequest:
		// 401, 403, 413, 429, a stateless-era 404 with -32601, a 400
		// -32602...: the answer to this request, not to the session.
		if isResponseTo(body, x.id) {
			c.deliverMsg(oneLine(body))
		} else {
			c.deliverMsg(c.httpError(x, resp.StatusCode, body))
		}
	default:
		c.log.Warn("server refused a message", "method", x.method, "status", resp.StatusCode, "body", c.red.String(bodyText(body)))
	}
}

// refusable is x's id when x is a request: the id to report as not
// processed.
func (c *httpConn) refusable(x *exchange) []byte {
	if x.cid != nil {
		return x.cid
	}
	if x.kind == jsonrpc.KindRequest && len(x.id) > 0 {
		return x.id
	}
	return nil
}

// httpError is the JSON-RPC error the client gets for a request the
// server refused with a non-JSON-RPC HTTP error. server/discover gets
// -32601 so that a client falls back to initialize, which is what a
// handshake-era server that rejects it (400 "not initialized", 405...)
// means.
func (c *httpConn) httpError(x *exchange, status int, body []byte) []byte {
	code := jsonrpc.CodeInternalError
	if x.method == "server/discover" {
		code = jsonrpc.CodeMethodNotFound
	}
	msg := fmt.Sprintf("remote MCP server %s answered HTTP %d %s", c.d.target, status, http.StatusText(status))
	msg += bodySaid(body)
	if x.isInit() && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) && c.d.o.Transport == TransportHTTP {
		msg += " (if this URL is a legacy HTTP+SSE endpoint, use --transport sse or auto)"
	}
	return jsonrpc.ErrorReply(x.id, code, c.red.String(msg), map[string]any{"http_status": status})
}

// answered handles a 2xx answer to x.
func (c *httpConn) answered(x *exchange, resp *http.Response) {
	if x.kind != jsonrpc.KindRequest && x.kind != jsonrpc.KindBatch {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if x.method == "notifications/initialized" && !c.d.o.NoServerStream {
			c.startListen()
		}
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		c.readPostStream(x, resp)
	case ct == "application/json":
		body, tl, err := readJSON(resp, c.d.o.MaxMessage)
		if tl != nil {
			c.log.Warn("dropped a response from the server over the size ceiling", "bytes", tl.Len, "limit", tl.Limit, "id", string(x.id))
			resp.Body.Close()
			freeMemory()
			c.deliverMsg(jsonrpc.TooLongReply(x.id, tl))
			return
		}
		if err != nil {
			if x.ctx.Err() == nil {
				c.die("connection lost while reading a response: "+describeErr(err), nil)
			}
			return
		}
		body = oneLine(body)
		if len(body) == 0 || jsoncheck.Valid(body) != nil {
			c.deliverMsg(jsonrpc.ErrorReply(x.id, jsonrpc.CodeInternalError,
				fmt.Sprintf("remote MCP server %s sent an invalid JSON response", c.d.target), nil))
			return
		}
		c.deliverMsg(body)
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		// No body: the response, if any, comes on the GET stream.
	default:
		c.deliverMsg(jsonrpc.ErrorReply(x.id, jsonrpc.CodeInternalError,
			c.red.String(fmt.Sprintf("remote MCP server %s answered with unsupported content type %q", c.d.target, ct)), nil))
	}
}

// deliverMsg notes what the bridge must know about a server message, then
// hands it to Recv.
func (c *httpConn) deliverMsg(msg []byte) {
	c.smu.Lock()
	initID := c.initID
	lists := len(c.toolLists) > 0
	c.smu.Unlock()
	if lists {
		if m, err := jsonrpc.PeekAnyText(msg); err == nil && m.Kind == jsonrpc.KindResponse {
			c.smu.Lock()
			pending := c.toolLists[string(m.ID)]
			delete(c.toolLists, string(m.ID))
			c.smu.Unlock()
			if pending {
				c.d.params.learn(gjson.GetBytes(msg, "result"))
			}
		}
	}
	if initID != nil && isResponseTo(msg, initID) {
		if v := gjson.GetBytes(msg, "result.protocolVersion"); v.Type == gjson.String {
			// Set before the client can see the result and send
			// anything else (2025-06-18, "Protocol Version Header").
			c.smu.Lock()
			c.protoVer = v.Str
			c.smu.Unlock()
		}
	}
	c.deliver(c.clientIDs(msg))
}

// Close DELETEs a live session (2025-03-26, "Session Management"; 405 is
// fine) and stops everything.
func (c *httpConn) Close() error {
	return c.shutdown(func() {
		c.smu.Lock()
		sid := c.sessionID
		c.smu.Unlock()
		if sid == "" || c.isDying() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		h := c.header(nil)
		req, err := c.newRequest(ctx, http.MethodDelete, nil, h)
		if err != nil {
			return
		}
		if resp, err := c.d.o.Client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
		}
	})
}
