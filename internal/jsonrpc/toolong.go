package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// PeekHead reads the routing members of a message from its first bytes
// only (the head of a line too long to keep, TooLongError.Head): the
// members that come before the cut, as every SDK writes them (jsonrpc, id,
// then method or result/error, then the large params or result). Kind is
// KindResponse when an id came before a result or error member (even one
// cut off), KindRequest or KindNotification when a method did, and
// KindInvalid when the head does not tell.
func PeekHead(head []byte) Msg {
	var m Msg
	var id []byte
	headMembers(head, func(key string, val []byte) bool {
		switch key {
		case "result", "error":
			if id != nil && m.Method == "" {
				m.Kind, m.ID, m.IsError = KindResponse, id, key == "error"
				return false
			}
		case "id":
			if val != nil && id == nil && (val[0] == '"' || IsInteger(string(val))) {
				id = bytes.Clone(val)
			}
		case "method":
			if val != nil && val[0] == '"' && m.Method == "" {
				m.Method = unquoteKey(val)
			}
		}
		return true
	})
	switch {
	case m.Kind == KindResponse:
	case m.Method != "" && id != nil:
		m.Kind, m.ID = KindRequest, id
	case m.Method != "":
		m.Kind = KindNotification
	}
	return m
}

// ResponseHead reports whether head, the first part of a line still
// coming (Reader.Parts), begins a JSON-RPC response as far as it goes: an
// object whose members before the cut are well-formed JSON, among them a
// result or an error member, and none a method. A relay may then pass the
// line on as it comes. id is the raw text of the id member when it came
// before the cut, else nil (the TypeScript SDK writes it last:
// {"result":…,"jsonrpc":"2.0","id":7}); the rest is followed as it comes
// (Follower).
func ResponseHead(head []byte) (id []byte, ok bool) {
	resp, bad := false, false
	cut := headMembers(head, func(key string, val []byte) bool {
		switch key {
		case "method":
			bad = true
		case "result", "error":
			resp = true
		case "id":
			if val != nil && id == nil {
				bad = val[0] != '"' && !IsInteger(string(val))
				id = val
			}
		}
		return !bad
	})
	return id, cut && resp && !bad
}

// headMembers calls visit with each top-level member of the object that
// head begins, in order: its name, and its value's raw text (nil when the
// value is cut by the end of head, or is not JSON; the walk ends there).
// It stops early when visit returns false. cut: the walk ran into the end
// of head inside the object with every member before it well-formed (or
// visit stopped it); false when head is no object's start, or the object
// ended within it.
func headMembers(head []byte, visit func(key string, val []byte) bool) (cut bool) {
	b := head
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	for i < len(b) {
		if b[i] != '"' {
			return false
		}
		ks := i + 1
		ke, ok := validString(b, i)
		if !ok {
			return false // a cut name, or a broken one: not one this tells
		}
		key := string(b[ks : ke-1])
		if bytes.IndexByte(b[ks:ke-1], '\\') >= 0 {
			key = unquoteKey(b[ks-1 : ke])
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		vs := skipWS(b, i+1)
		ve, err := jsoncheck.ValueEnd(b, vs, 1)
		if err != nil {
			visit(key, nil)
			var se *jsoncheck.SyntaxError
			return errors.As(err, &se) && se.Offset == len(b)
		}
		if !visit(key, b[vs:ve]) {
			return true
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			break
		}
		if b[i] != ',' {
			return false
		}
		i = skipWS(b, i+1)
	}
	return true
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
