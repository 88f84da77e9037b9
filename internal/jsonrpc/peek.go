package jsonrpc

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// Kind says what a message is.
type Kind int

const (
	KindInvalid      Kind = iota
	KindRequest           // has method and id
	KindNotification      // has method, no id
	KindResponse          // has id and result or error, no method
	KindBatch             // a JSON array (2025-03-26 only)
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	case KindBatch:
		return "batch"
	}
	return "invalid"
}

// Msg is what a proxy needs to route one message. ID is the raw JSON text of
// the id (e.g. `7` or `"abc"`), a sub-slice of the line passed to Peek.
type Msg struct {
	Kind   Kind
	ID     []byte
	Method string
	// IsError is set on a Response that carries "error".
	IsError bool
}

// Errors Peek returns; callers reply with CodeParseError or
// CodeInvalidRequest accordingly.
var (
	ErrNotJSON     = errors.New("not valid JSON")
	ErrNotUTF8     = errors.New("not valid UTF-8")
	ErrNotJSONRPC  = errors.New("not a JSON-RPC 2.0 message")
	ErrInvalidID   = errors.New("invalid id: must be a string or an integer")
	ErrEmptyMethod = errors.New("empty method")
)

// Peek validates line as one JSON-RPC message and returns its routing
// members. It never decodes params or result.
//
// It does so in one pass: the validator (scan.go) notes the top-level
// members as it goes. Looking each member up after a separate validation
// (gjson's GetManyBytes after ValidBytes) cost ten times as much per 4 KiB
// message and was the shim's largest cost per message.
func Peek(line []byte) (Msg, error) {
	if !utf8.Valid(line) {
		return Msg{}, ErrNotUTF8
	}
	return PeekAnyText(line)
}

// PeekAnyText is Peek for a line from a server: invalid UTF-8 in it is no
// error. The MCP SDK clients (Claude Code's among them) decode what a
// server sends with U+FFFD for each invalid sequence and take the message,
// so a proxy passes such a line on byte for byte and lets the client
// decode it as it would have directly (replacing the bytes here would not
// match: Node's decoder and Go's count invalid sequences differently).
// Everything else is checked as Peek checks it.
func PeekAnyText(line []byte) (Msg, error) {
	obj, id, method, result, errv, ok := topMembers(line)
	if !ok {
		return Msg{}, ErrNotJSON
	}
	if !obj {
		if i := skipWS(line, 0); line[i] == '[' {
			return Msg{Kind: KindBatch}, nil
		}
		return Msg{}, ErrNotJSONRPC
	}
	var m Msg
	if id.found {
		raw := line[id.valStart:id.valE:id.valE]
		switch c := raw[0]; {
		case c == '"':
		case c == '-' || (c >= '0' && c <= '9'):
			if !IsInteger(string(raw)) {
				return Msg{}, ErrInvalidID
			}
		case c == 'n':
			if method.found {
				return Msg{}, ErrInvalidID
			}
		default:
			return Msg{}, ErrInvalidID
		}
		m.ID = raw
	}
	switch {
	case method.found:
		raw := line[method.valStart:method.valE]
		if raw[0] != '"' {
			return Msg{}, ErrNotJSONRPC
		}
		name := string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 {
			name = unquoteKey(raw)
		}
		if name == "" {
			return Msg{}, ErrEmptyMethod
		}
		m.Method = name
		m.Kind = KindNotification
		if id.found {
			m.Kind = KindRequest
		}
	case result.found || errv.found:
		if !id.found {
			return Msg{}, ErrNotJSONRPC
		}
		m.Kind = KindResponse
		m.IsError = errv.found
	default:
		return Msg{}, ErrNotJSONRPC
	}
	return m, nil
}

// IsInteger reports whether raw is the JSON text of an integer (an id may
// be a string or an integer, never a fraction).
func IsInteger(raw string) bool {
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
