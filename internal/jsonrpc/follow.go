package jsonrpc

import (
	"bytes"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// Follower follows a message passed on as it comes, part by part, and
// judges it at its end as Peek judges a whole line, without holding it:
// the bytes are checked by jsoncheck.Stream (the grammar Peek's
// jsoncheck.ValueEnd applies, numbers and literals included, the same
// depth limit), and the top-level members a router needs are noted as
// they end. Memory is bounded whatever the message: its open containers
// (at most jsoncheck.MaxDepth) and the first 256 bytes of a member's
// value.
//
// A message cut short, interleaved with a stray line, or closed twice
// ends unbalanced or with bytes after its end: End reports it.
type Follower struct {
	s       jsoncheck.Stream
	started bool
	id      []byte // the first id member's value (nil: none)
	idLong  bool   // it was longer than the Stream keeps
	method  []byte // the first method member's value
	result  bool
	errv    bool
}

// Write follows the next part of the message.
func (f *Follower) Write(p []byte) {
	if !f.started {
		f.started = true
		f.s.Member = f.member
	}
	f.s.Write(p)
}

// member notes a top-level member: the first of each name counts, as in
// Peek.
func (f *Follower) member(name, val []byte, whole bool) {
	if name == nil {
		return
	}
	k := string(name[1 : len(name)-1])
	if bytes.IndexByte(name, '\\') >= 0 {
		k = unquoteKey(name)
	}
	switch k {
	case "id":
		if f.id == nil && !f.idLong {
			f.id, f.idLong = bytes.Clone(val), !whole
		}
	case "method":
		if f.method == nil {
			f.method = bytes.Clone(val[:min(len(val), 2)])
			if whole {
				f.method = bytes.Clone(val)
			}
		}
	case "result":
		f.result = true
	case "error":
		f.errv = true
	}
}

// End judges the message once its last part was followed, as
// PeekAnyText judges a whole line: the Msg it would return (its Method
// left empty), or its error. ErrNotJSON for no whole JSON value (cut
// short, or bytes after its end); a message that is JSON but no JSON-RPC
// message gets Peek's error for it, with the id when it names one.
func (f *Follower) End() (Msg, error) {
	if err := f.s.End(); err != nil {
		return Msg{ID: f.routable()}, ErrNotJSON
	}
	if f.s.First() != '{' {
		if f.s.First() == '[' {
			return Msg{Kind: KindBatch}, nil
		}
		return Msg{}, ErrNotJSONRPC
	}
	var m Msg
	if f.id != nil {
		switch c := f.id[0]; {
		case c == '"':
		case c == '-' || c >= '0' && c <= '9':
			if !IsInteger(string(f.id)) {
				return Msg{}, ErrInvalidID
			}
		case c == 'n':
			if f.method != nil {
				return Msg{}, ErrInvalidID
			}
		default:
			return Msg{}, ErrInvalidID
		}
		if !f.idLong {
			m.ID = f.id
		}
	}
	switch {
	case f.method != nil:
		if f.method[0] != '"' {
			return Msg{ID: m.ID}, ErrNotJSONRPC
		}
		if string(f.method) == `""` {
			return Msg{ID: m.ID}, ErrEmptyMethod
		}
		m.Kind = KindNotification
		if f.id != nil {
			m.Kind = KindRequest
		}
	case f.result || f.errv:
		if f.id == nil {
			return Msg{}, ErrNotJSONRPC
		}
		m.Kind = KindResponse
		m.IsError = f.errv
	default:
		return Msg{ID: m.ID}, ErrNotJSONRPC
	}
	return m, nil
}

// routable is the id a broken message names, when it is one a call can
// have: a string or an integer.
func (f *Follower) routable() []byte {
	if f.id == nil || f.idLong || f.id[0] != '"' && !IsInteger(string(f.id)) {
		return nil
	}
	return f.id
}
