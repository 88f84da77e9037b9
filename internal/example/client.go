package example

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// ErrClosed is returned for calls on a connection whose server side ended:
// what a client connected straight to a dead stdio server sees (the
// TypeScript SDK reports it as -32000 "Connection closed").
var ErrClosed = errors.New("connection closed")

// Client is a minimal MCP client over a pair of streams, enough to drive the
// example server (directly or through the shim) in the demo and in tests.
// Call is safe for concurrent use.
type Client struct {
	w *jsonrpc.Writer

	mu      sync.Mutex
	next    int64
	pending map[string]chan Response
	closed  bool
	// stateless: the stateless era was negotiated; requests carry
	// _meta[io.modelcontextprotocol/protocolVersion].
	stateless bool

	notes chan []byte
	done  chan struct{}
}

// Response is one reply: Result or Error is set.
type Response struct {
	Raw    []byte
	Result json.RawMessage
	Error  *RPCError
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// NewClient reads replies from r and writes requests to w. Its reader
// goroutine ends when r ends; close r (or let the server exit) to stop it.
func NewClient(r io.Reader, w io.Writer) *Client {
	c := &Client{
		w:       jsonrpc.NewWriter(w),
		pending: map[string]chan Response{},
		notes:   make(chan []byte, 256),
		done:    make(chan struct{}),
	}
	go c.read(r)
	return c
}

func (c *Client) read(r io.Reader) {
	defer close(c.done)
	jr := jsonrpc.NewReader(r)
	for {
		line, err := jr.Next()
		if err != nil {
			break
		}
		m, err := jsonrpc.Peek(line)
		if err != nil {
			continue
		}
		line = append([]byte(nil), line...)
		switch m.Kind {
		case jsonrpc.KindResponse:
			var resp struct {
				Result json.RawMessage `json:"result"`
				Error  *RPCError       `json:"error"`
			}
			json.Unmarshal(line, &resp)
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- Response{Raw: line, Result: resp.Result, Error: resp.Error}
			}
		case jsonrpc.KindNotification:
			select {
			case c.notes <- line:
			default: // nobody is listening; drop
			}
		case jsonrpc.KindRequest:
			// Server->client requests (roots/list, sampling): answer
			// "method not found" so the server is never left waiting.
			c.w.WriteLine(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeMethodNotFound, "client supports no requests", nil))
		}
	}
	c.mu.Lock()
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

// Done is closed when the server side of the connection ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Notifications delivers notifications from the server (buffered; extra
// ones are dropped when nobody reads).
func (c *Client) Notifications() <-chan []byte { return c.notes }

// Call sends a request and waits for its reply. The error is ErrClosed when
// the connection ended before a reply, or ctx's error.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (Response, error) {
	c.mu.Lock()
	if c.stateless {
		params = withVersionMeta(params)
	}
	var p []byte
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			c.mu.Unlock()
			return Response{}, err
		}
	}
	if c.closed {
		c.mu.Unlock()
		return Response{}, ErrClosed
	}
	c.next++
	id := []byte(strconv.FormatInt(c.next, 10))
	ch := make(chan Response, 1)
	c.pending[string(id)] = ch
	c.mu.Unlock()
	if err := c.w.WriteLine(jsonrpc.NewRequest(id, method, p)); err != nil {
		c.forget(id)
		return Response{}, ErrClosed
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return Response{}, ErrClosed
		}
		return r, nil
	case <-ctx.Done():
		c.forget(id)
		c.Notify("notifications/cancelled", map[string]any{"requestId": json.RawMessage(id), "reason": "client timeout"})
		return Response{}, ctx.Err()
	}
}

func (c *Client) forget(id []byte) {
	c.mu.Lock()
	delete(c.pending, string(id))
	c.mu.Unlock()
}

var clientInfo = map[string]any{"name": "mcp-heal-client", "version": "1"}

// withVersionMeta returns a copy of params with the stateless era's
// per-request protocol version in _meta.
func withVersionMeta(params map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range params {
		out[k] = v
	}
	meta := map[string]any{}
	if m, ok := params["_meta"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	// 2026-07-28: every request carries what initialize used to carry.
	meta[metaProtocolVersion] = StatelessVersion
	meta["io.modelcontextprotocol/clientInfo"] = clientInfo
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
	out["_meta"] = meta
	return out
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	var p []byte
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			return err
		}
	}
	if err := c.w.WriteLine(jsonrpc.NewNotification(method, p)); err != nil {
		return ErrClosed
	}
	return nil
}

// Initialize opens the session the way Claude Code 2.1.328 does: probe
// server/discover (2026-07-28) and, when that fails, initialize with version
// on the same connection, then notifications/initialized. It returns the era
// negotiated, "stateless" or "handshake"; in the stateless era later calls
// carry the protocol version in _meta.
func (c *Client) Initialize(ctx context.Context, version string) (string, error) {
	r, err := c.Call(ctx, "server/discover", map[string]any{"_meta": map[string]any{
		metaProtocolVersion:                          StatelessVersion,
		"io.modelcontextprotocol/clientInfo":         clientInfo,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}})
	if err != nil {
		return "", err
	}
	if r.Error == nil {
		c.mu.Lock()
		c.stateless = true
		c.mu.Unlock()
		return "stateless", nil
	}
	return "handshake", c.Handshake(ctx, version)
}

// Handshake runs the handshake-era lifecycle without the server/discover
// probe: initialize with version, then notifications/initialized.
func (c *Client) Handshake(ctx context.Context, version string) error {
	r, err := c.Call(ctx, "initialize", map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      clientInfo,
	})
	if err != nil {
		return err
	}
	if r.Error != nil {
		return fmt.Errorf("initialize: %w", r.Error)
	}
	return c.Notify("notifications/initialized", nil)
}

// CallTool calls a tool; a result with isError is returned as a result.
func (c *Client) CallTool(ctx context.Context, name string, args map[string]any) (Response, error) {
	if args == nil {
		args = map[string]any{}
	}
	return c.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
}

// Text returns the first text content of a tools/call result.
func (r Response) Text() string {
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(r.Result, &res)
	if len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}
