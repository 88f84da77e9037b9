package shim

import (
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// peekLine is jsonrpc.Peek in fewer passes over the line: jsonrpc.PeekValid
// looks each member up separately (gjson.GetMany scans the object once per
// member, and a missing member means a full scan), which dominated the
// shim's cost per message. Here one pass over the top-level members finds
// them all. valid says line was already validated as UTF-8 JSON.
func peekLine(line []byte, valid bool) (jsonrpc.Msg, error) {
	if !valid {
		if !utf8.Valid(line) {
			return jsonrpc.Msg{}, jsonrpc.ErrNotUTF8
		}
		if !gjson.ValidBytes(line) {
			return jsonrpc.Msg{}, jsonrpc.ErrNotJSON
		}
	}
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n') {
		i++
	}
	if i == len(line) {
		return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
	}
	switch line[i] {
	case '[':
		return jsonrpc.Msg{Kind: jsonrpc.KindBatch}, nil
	case '{':
	default:
		return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
	}
	// gjson reads strings; this view of line is never retained past the
	// call (ID below is re-sliced from line itself).
	s := unsafe.String(unsafe.SliceData(line), len(line))
	var id, method gjson.Result
	var hasID, hasMethod, hasResult, hasError bool
	gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "id":
			if !hasID {
				id, hasID = v, true
			}
		case "method":
			if !hasMethod {
				method, hasMethod = v, true
			}
		case "result":
			hasResult = true
		case "error":
			hasError = true
		}
		// Stop early only when nothing later can change the verdict.
		return !(hasID && hasMethod)
	})
	var m jsonrpc.Msg
	if hasID {
		switch id.Type {
		case gjson.String:
		case gjson.Number:
			if !isInteger(id.Raw) {
				return jsonrpc.Msg{}, jsonrpc.ErrInvalidID
			}
		case gjson.Null:
			if hasMethod {
				return jsonrpc.Msg{}, jsonrpc.ErrInvalidID
			}
		default:
			return jsonrpc.Msg{}, jsonrpc.ErrInvalidID
		}
		if id.Index <= 0 || id.Index+len(id.Raw) > len(line) {
			return jsonrpc.Msg{}, jsonrpc.ErrInvalidID
		}
		end := id.Index + len(id.Raw)
		m.ID = line[id.Index:end:end]
	}
	switch {
	case hasMethod:
		if method.Type != gjson.String {
			return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
		}
		if method.Str == "" {
			return jsonrpc.Msg{}, jsonrpc.ErrEmptyMethod
		}
		m.Method = method.Str
		m.Kind = jsonrpc.KindNotification
		if hasID {
			m.Kind = jsonrpc.KindRequest
		}
	case hasResult || hasError:
		if !hasID {
			return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
		}
		m.Kind = jsonrpc.KindResponse
		m.IsError = hasError
	default:
		return jsonrpc.Msg{}, jsonrpc.ErrNotJSONRPC
	}
	// method.Str may alias line when unescaped; callers keep it only as
	// long as line, except where they copy it.
	if hasMethod {
		m.Method = string([]byte(m.Method))
	}
	return m, nil
}

func isInteger(raw string) bool {
	if raw == "" {
		return false
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '-' && i == 0 {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
