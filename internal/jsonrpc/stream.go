package jsonrpc

import (
	"bytes"
	"errors"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// ResponseHead reports whether head, the first part of a line still
// coming (Reader.Parts), begins a JSON-RPC response as far as it goes: an
// object whose members before the cut are well-formed JSON, among them a
// result or an error member, and none a method. A relay may then pass the
// line on as it comes. id is the raw text of the id member when it came
// before the cut, else nil (the TypeScript SDK writes it last:
// {"result":…,"jsonrpc":"2.0","id":7}); the whole line is Peek'd once it
// is complete.
func ResponseHead(head []byte) (id []byte, ok bool) {
	b := head
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipWS(b, i+1)
	resp := false
	for i < len(b) {
		if b[i] != '"' {
			return nil, false
		}
		ks := i + 1
		ke, ok := validString(b, i)
		if !ok {
			return nil, false // a key longer than the head: not a message
		}
		key := string(b[ks : ke-1])
		if bytes.IndexByte(b[ks:ke-1], '\\') >= 0 {
			key = unquoteKey(b[ks-1 : ke])
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		vs := skipWS(b, i+1)
		switch key {
		case "method":
			return nil, false
		case "result", "error":
			resp = true
		}
		ve, err := jsoncheck.ValueEnd(b, vs, 1)
		if err != nil {
			// Cut inside this member's value: fine when it is only cut.
			var se *jsoncheck.SyntaxError
			return id, resp && errors.As(err, &se) && se.Offset == len(b)
		}
		if key == "id" && id == nil {
			raw := b[vs:ve]
			if raw[0] != '"' && !IsInteger(string(raw)) {
				return nil, false
			}
			id = raw
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			break
		}
		if b[i] != ',' {
			return nil, false // "}" within 64 KiB: not a long line's head
		}
		i = skipWS(b, i+1)
	}
	return id, resp
}
