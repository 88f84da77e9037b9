package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// clientInfo names the probe to the server.
var clientInfo = map[string]string{"name": "mcp-heal-probe", "version": "1"}

// rpcError is a JSON-RPC error the server answered with.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// statusError is a request the server refused with an HTTP status.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string   { return e.msg }
func (e *statusError) StatusCode() int { return e.code }

// transport carries one probe's messages: call sends a request and returns
// its result, notify sends a notification. Both are used by one goroutine.
type transport interface {
	call(ctx context.Context, id int, method string, params any) (json.RawMessage, error)
	notify(ctx context.Context, method string, params any) error
}

func request(id int, method string, params any) []byte {
	p, _ := json.Marshal(params)
	return jsonrpc.NewRequest([]byte(fmt.Sprint(id)), method, p)
}

func notification(method string, params any) []byte {
	var p []byte
	if params != nil {
		p, _ = json.Marshal(params)
	}
	return jsonrpc.NewNotification(method, p)
}

// answerServerRequest answers what a server may ask its client during the
// handshake (MCP: roots/list after initialized, ping any time), so a
// server that waits for the answer does not stall the probe.
func answerServerRequest(msg []byte) []byte {
	id := gjson.GetBytes(msg, "id")
	if !id.Exists() {
		return nil
	}
	switch gjson.GetBytes(msg, "method").String() {
	case "ping":
		return jsonrpc.ResultReply([]byte(id.Raw), []byte(`{}`))
	case "roots/list":
		return jsonrpc.ResultReply([]byte(id.Raw), []byte(`{"roots":[]}`))
	}
	return jsonrpc.ErrorReply([]byte(id.Raw), jsonrpc.CodeMethodNotFound, "method not supported by mcp-heal probe", nil)
}

// handshake runs initialize (2025-11-25) + notifications/initialized, or
// server/discover (2026-07-28) when initialize is unknown, then tools/list.
func handshake(ctx context.Context, t transport) (Result, error) {
	var r Result
	res, err := t.call(ctx, 1, "initialize", map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      clientInfo,
	})
	meta := map[string]any{}
	var re *rpcError
	switch {
	case err == nil:
		r.Era = "handshake"
		r.ProtocolVersion = gjson.GetBytes(res, "protocolVersion").String()
		r.ServerName = gjson.GetBytes(res, "serverInfo.name").String()
		r.ServerVersion = gjson.GetBytes(res, "serverInfo.version").String()
		if err := t.notify(ctx, "notifications/initialized", nil); err != nil {
			return r, err
		}
	case errors.As(err, &re) && re.Code == jsonrpc.CodeMethodNotFound:
		// A stateless-era server (2026-07-28) need not know initialize but
		// MUST answer server/discover; every request carries the version.
		meta = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    StatelessVersion,
			"io.modelcontextprotocol/clientInfo":         clientInfo,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
		res, err = t.call(ctx, 2, "server/discover", map[string]any{"_meta": meta})
		if err != nil {
			return r, err
		}
		r.Era = "stateless"
		r.ProtocolVersion = StatelessVersion
		r.ServerName = first(res, "serverInfo.name", "server.name", "name")
		r.ServerVersion = first(res, "serverInfo.version", "server.version", "version")
	default:
		return r, err
	}
	params := map[string]any{}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	res, err = t.call(ctx, 3, "tools/list", params)
	if err != nil {
		if errors.As(err, &re) && re.Code == jsonrpc.CodeMethodNotFound {
			r.OK = true // a server without tools
			return r, nil
		}
		return r, fmt.Errorf("tools/list: %w", err)
	}
	for _, tool := range gjson.GetBytes(res, "tools").Array() {
		r.Tools = append(r.Tools, tool.Get("name").String())
	}
	r.OK = true
	return r, nil
}

func first(res json.RawMessage, paths ...string) string {
	for _, p := range paths {
		if v := gjson.GetBytes(res, p); v.Exists() {
			return v.String()
		}
	}
	return ""
}

// response reports whether msg answers id and returns its result or error.
func response(msg []byte, id int) (json.RawMessage, error, bool) {
	if gjson.GetBytes(msg, "method").Exists() || gjson.GetBytes(msg, "id").Raw != fmt.Sprint(id) {
		return nil, nil, false
	}
	if e := gjson.GetBytes(msg, "error"); e.Exists() {
		var re rpcError
		if json.Unmarshal([]byte(e.Raw), &re) != nil {
			re = rpcError{Code: jsonrpc.CodeInternalError, Message: e.Raw}
		}
		if st := e.Get("data.http_status").Int(); st > 0 {
			// The bridge's answer for a request the server refused
			// with an HTTP error (401, 404...).
			return nil, &statusError{code: int(st), msg: re.Message}, true
		}
		return nil, &re, true
	}
	return json.RawMessage(gjson.GetBytes(msg, "result").Raw), nil, true
}
