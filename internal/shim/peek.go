package shim

import (
	"unicode/utf8"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// peekLine is jsonrpc.Peek in one pass over the line: jsonrpc.PeekValid
// looks each member up separately after a separate validation (gjson scans
// the object once per member, and a missing member means a full scan),
// which dominated the shim's cost per message. Here the validator itself
// notes the top-level members.
func peekLine(line []byte) (jsonrpc.Msg, error) {
	if !utf8.Valid(line) {
		return jsonrpc.Msg{}, jsonrpc.ErrNotUTF8
	}
	obj, id, method, result, errv, ok := topMembers(line)
	if !ok {
		return jsonrpc.Msg{}, jsonrpc.ErrNotJSON
	}
	if !obj {
		if i := skipWS(line, 0); line[i] == '[' {
			return jsonrpc.Msg{Kind: jsonrpc.KindBatch}, nil
		}
		return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
	}
	var m jsonrpc.Msg
	if id.found {
		raw := line[id.valStart:id.valE:id.valE]
		switch c := raw[0]; {
		case c == '"':
		case c == '-' || (c >= '0' && c <= '9'):
			if !jsonrpc.IsInteger(string(raw)) {
				return jsonrpc.Msg{}, jsonrpc.ErrInvalidID
			}
		case c == 'n':
			if method.found {
				return jsonrpc.Msg{}, jsonrpc.ErrInvalidID
			}
		default:
			return jsonrpc.Msg{}, jsonrpc.ErrInvalidID
		}
		m.ID = raw
	}
	switch {
	case method.found:
		raw := line[method.valStart:method.valE]
		if raw[0] != '"' {
			return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
		}
		name := string(raw[1 : len(raw)-1])
		if bytesHasBackslash(raw) {
			name = unquoteKey(raw)
		}
		if name == "" {
			return jsonrpc.Msg{}, jsonrpc.ErrEmptyMethod
		}
		m.Method = name
		m.Kind = jsonrpc.KindNotification
		if id.found {
			m.Kind = jsonrpc.KindRequest
		}
	case result.found || errv.found:
		if !id.found {
			return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
		}
		m.Kind = jsonrpc.KindResponse
		m.IsError = errv.found
	default:
		return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
	}
	return m, nil
}
