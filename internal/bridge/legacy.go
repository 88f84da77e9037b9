package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// sseConn is one legacy HTTP+SSE session (MCP 2024-11-05, "Transports",
// HTTP with SSE): a GET stream whose first event names the endpoint to POST
// messages to; every server message arrives on the stream. The stream
// closing means the session is gone (the server restarted or dropped it).
type sseConn struct {
	base
	d        *Dialer
	endpoint string
}

// openLegacy reads the endpoint event from an open SSE stream (resp) and
// returns the running connection, which owns resp from then on. ctx is
// resp's request context and becomes the connection's; cancel ends it.
func (d *Dialer) openLegacy(ctx context.Context, cancel context.CancelFunc, resp *http.Response, first *event, r *sseReader) (*sseConn, error) {
	if first == nil || first.Name != "endpoint" {
		return nil, fmt.Errorf("legacy SSE server %s sent no endpoint event", d.target)
	}
	ep, err := d.u.Parse(strings.TrimSpace(string(first.Data)))
	if err != nil {
		return nil, fmt.Errorf("legacy SSE server %s sent an invalid endpoint (%s)", d.target, text.Quote(redactURLError(err).Error()))
	}
	// 2024-11-05: the endpoint must be on the same origin; anything else
	// would send our headers to a host the user did not name.
	if origin(ep) != origin(d.u) {
		return nil, fmt.Errorf("legacy SSE server %s named an endpoint on another origin (%s)", d.target, text.Quote(ep.Scheme+"://"+ep.Host))
	}
	c := &sseConn{d: d, endpoint: ep.String()}
	c.init(d.o.Logger, d.red, d.o.Grace, ctx, cancel)
	c.ops.Add(1)
	go func() {
		defer c.ops.Done()
		defer resp.Body.Close()
		c.read(r)
	}()
	return c, nil
}

func (c *sseConn) read(r *sseReader) {
	for {
		ev, err := r.Next()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			why := "the server closed it"
			if err != io.EOF {
				why = describeErr(err)
			}
			c.die("session lost: SSE stream closed ("+why+"); the server restarted or dropped the session", nil)
			return
		}
		if msg := c.message(ev); msg != nil {
			c.deliver(msg)
		}
	}
}

// Send POSTs msg to the endpoint and waits for the server to accept it
// (202); the answer comes on the stream. See httpConn.Send for what the
// error means.
func (c *sseConn) Send(msg []byte) error {
	m, err := jsonrpc.Peek(msg)
	if err != nil {
		m = jsonrpc.Msg{}
	}
	if !c.begin() {
		return ErrDead
	}
	defer c.ops.Done()
	var refusable []byte
	if m.Kind == jsonrpc.KindRequest {
		refusable = m.ID
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.d.o.PostTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(msg))
	if err != nil {
		c.die("cannot build request: "+describeErr(err), refusable)
		return nil
	}
	req.Header = c.d.o.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.d.o.Client.Do(req)
	if err != nil {
		var re *redirectError
		switch {
		case c.ctx.Err() != nil:
		case errors.As(err, &re):
			if m.Kind == jsonrpc.KindRequest {
				c.deliver(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInternalError, c.red.String("remote MCP server "+c.d.target+": "+re.msg), map[string]any{"reason": "redirect-refused"}))
			}
		case notSent(err):
			c.die("server unreachable: "+describeErr(err), refusable)
		case ctx.Err() != nil:
			// server-everything never answers a POST for a session it
			// does not know.
			c.die(fmt.Sprintf("session lost: the server did not accept a message within %s", c.d.o.PostTimeout), nil)
		default:
			c.die("connection lost: "+describeErr(err), nil)
		}
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	status := httpStatus(resp.StatusCode, body)
	switch {
	case sessionLost(resp.StatusCode, body, false): // 2024-11-05 only
		c.die("session lost: "+status, refusable)
	case unavailable(resp.StatusCode):
		if resp.StatusCode != http.StatusServiceUnavailable {
			refusable = nil
		}
		c.die("server unavailable: "+status, refusable)
	case m.Kind == jsonrpc.KindRequest:
		if isResponseTo(body, m.ID) {
			c.deliver(oneLine(body))
		} else {
			msg := fmt.Sprintf("remote MCP server %s answered HTTP %d %s", c.d.target, resp.StatusCode, http.StatusText(resp.StatusCode))
			msg += bodySaid(body)
			c.deliver(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInternalError, c.red.String(msg), map[string]any{"http_status": resp.StatusCode}))
		}
	default:
		c.log.Warn("server refused a message", "method", m.Method, "status", resp.StatusCode, "body", c.red.String(bodyText(body)))
	}
	return nil
}

// Close ends the stream; the legacy transport has no DELETE.
func (c *sseConn) Close() error { return c.shutdown(nil) }
