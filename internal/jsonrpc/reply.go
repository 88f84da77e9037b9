package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// NullID is the id of an error reply to a message whose id could not be read.
var NullID = []byte("null")

// ErrorReply builds `{"jsonrpc":"2.0","id":<id>,"error":{...}}`. id is raw
// JSON (use NullID when unknown); data, when non-nil, is marshalled with
// encoding/json.
func ErrorReply(id []byte, code int, message string, data any) []byte {
	if len(id) == 0 {
		id = NullID
	}
	b := make([]byte, 0, 96+len(message))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	msg, _ := json.Marshal(message)
	b = append(b, msg...)
	if data != nil {
		if d, err := json.Marshal(data); err == nil {
			b = append(b, `,"data":`...)
			b = append(b, d...)
		}
	}
	b = append(b, "}}"...)
	return b
}

// ResultReply builds `{"jsonrpc":"2.0","id":<id>,"result":<result>}` with
// result already encoded as JSON.
func ResultReply(id []byte, result []byte) []byte {
	b := make([]byte, 0, 40+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	b = append(b, '}')
	return b
}

// NewRequest builds a request line with a raw id and already-encoded params
// (nil for none).
func NewRequest(id []byte, method string, params []byte) []byte {
	return request(id, method, params)
}

// NewNotification builds a notification line with already-encoded params (nil
// for none).
func NewNotification(method string, params []byte) []byte {
	return request(nil, method, params)
}

// request builds a request line, or a notification when id is nil.
func request(id []byte, method string, params []byte) []byte {
	m, _ := json.Marshal(method)
	b := make([]byte, 0, 48+len(id)+len(m)+len(params))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if id != nil {
		b = append(b, `,"id":`...)
		b = append(b, id...)
	}
	b = append(b, `,"method":`...)
	b = append(b, m...)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	b = append(b, '}')
	return b
}
