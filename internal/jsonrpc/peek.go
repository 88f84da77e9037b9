package jsonrpc

import (
	"errors"
	"unicode/utf8"

	"github.com/tidwall/gjson"
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
func Peek(line []byte) (Msg, error) {
	if !utf8.Valid(line) {
		return Msg{}, ErrNotUTF8
	}
	if !gjson.ValidBytes(line) {
		return Msg{}, ErrNotJSON
	}
	return PeekValid(line)
}

// PeekValid is Peek for a line already known to be valid UTF-8 JSON.
func PeekValid(line []byte) (Msg, error) {
	first := firstByte(line)
	if first == '[' {
		return Msg{Kind: KindBatch}, nil
	}
	if first != '{' {
		return Msg{}, ErrNotJSONRPC
	}
	res := gjson.GetManyBytes(line, "id", "method", "result", "error")
	id, method, result, errv := res[0], res[1], res[2], res[3]
	var m Msg
	if id.Exists() {
		switch id.Type {
		case gjson.String:
		case gjson.Number:
			if !IsInteger(id.Raw) {
				return Msg{}, ErrInvalidID
			}
		case gjson.Null:
			// Allowed only on error responses to unparseable requests.
			if method.Exists() {
				return Msg{}, ErrInvalidID
			}
		default:
			return Msg{}, ErrInvalidID
		}
		m.ID = rawSlice(line, id)
	}
	switch {
	case method.Exists():
		if method.Type != gjson.String {
			return Msg{}, ErrNotJSONRPC
		}
		if method.Str == "" {
			return Msg{}, ErrEmptyMethod
		}
		m.Method = method.Str
		if id.Exists() {
			m.Kind = KindRequest
		} else {
			m.Kind = KindNotification
		}
	case result.Exists() || errv.Exists():
		if !id.Exists() {
			return Msg{}, ErrNotJSONRPC
		}
		m.Kind = KindResponse
		m.IsError = errv.Exists()
	default:
		return Msg{}, ErrNotJSONRPC
	}
	return m, nil
}

// rawSlice returns r's raw text as a sub-slice of line when gjson reports its
// index, avoiding a copy.
func rawSlice(line []byte, r gjson.Result) []byte {
	if r.Index > 0 && r.Index+len(r.Raw) <= len(line) {
		return line[r.Index : r.Index+len(r.Raw) : r.Index+len(r.Raw)]
	}
	return []byte(r.Raw)
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
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
