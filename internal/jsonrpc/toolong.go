package jsonrpc

import (
	"bytes"
	"fmt"
)

// PeekHead reads the routing members of a message from its first bytes
// only (the head of a line too long to keep, TooLongError.Head): the
// members that come before the cut, as every SDK writes them (jsonrpc, id,
// then method or result/error, then the large params or result). Kind is
// KindResponse when an id came before a result or error member (even one
// cut off), KindRequest or KindNotification when a method did, and
// KindInvalid when the head does not tell.
func PeekHead(head []byte) Msg {
	b := head
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Msg{}
	}
	i = skipWS(b, i+1)
	var m Msg
	var id []byte
	for i < len(b) && b[i] == '"' {
		ks := i + 1
		ke, ok := validString(b, i)
		if !ok {
			break
		}
		key := string(b[ks : ke-1])
		if bytes.IndexByte(b[ks:ke-1], '\\') >= 0 {
			key = unquoteKey(b[ks-1 : ke])
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			break
		}
		vs := skipWS(b, i+1)
		ve, okv := validValue(b, vs, 1)
		switch key {
		case "result", "error":
			if id != nil && m.Method == "" {
				m.Kind, m.ID, m.IsError = KindResponse, id, key == "error"
				return m
			}
		case "id":
			if okv && id == nil {
				raw := b[vs:ve]
				if raw[0] == '"' || IsInteger(string(raw)) {
					id = bytes.Clone(raw)
				}
			}
		case "method":
			if okv && b[vs] == '"' && m.Method == "" {
				m.Method = unquoteKey(b[vs:ve])
			}
		}
		if !okv {
			break
		}
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	switch {
	case m.Method != "" && id != nil:
		m.Kind, m.ID = KindRequest, id
	case m.Method != "":
		m.Kind = KindNotification
	}
	return m
}

// DroppedReply is what a relay forwards in place of a message it dropped
// for its size: when the head shows a response, an error response to the
// same id (TooLongReply), so that the client's request ends at once with
// the reason instead of waiting forever; otherwise nil (the relay only
// logs).
func DroppedReply(e *TooLongError) []byte {
	m := PeekHead(e.Head)
	if m.Kind != KindResponse {
		return nil
	}
	return TooLongReply(m.ID, e)
}

// TooLongReply is the error response to request id whose response was
// dropped for its size (e.Len < 0: size unknown, over the ceiling).
func TooLongReply(id []byte, e *TooLongError) []byte {
	size := fmt.Sprintf("%d bytes", e.Len)
	if e.Len < 0 {
		size = "larger"
	}
	msg := fmt.Sprintf("the MCP server's response (%s) is over the %d-byte message ceiling; mcp-heal dropped it", size, e.Limit)
	if e.Limit >= DefaultMaxMessage {
		// Raising it would not help: Claude Code would drop the server.
		msg += " (Claude Code takes no longer message)"
	} else {
		msg += " (raise the ceiling with mcp-heal shim --max-message)"
	}
	return ErrorReply(id, CodeInternalError, msg, map[string]any{"reason": "message-too-large", "bytes": e.Len, "limit": e.Limit})
}
