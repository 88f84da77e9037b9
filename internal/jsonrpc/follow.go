package jsonrpc

import (
	"errors"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// Follower follows a message (one JSON object) passed on as it comes,
// part by part, far enough to route it at its end without holding it: the nesting of its
// arrays and objects, its strings (checked as Valid checks them, escapes
// included, also when a part cuts one), and the raw value of its
// top-level id member. Between strings it checks only that each byte may
// appear there; numbers and literals are the client's to judge. Memory is
// bounded whatever the message: its open containers (at most
// jsoncheck.MaxDepth) and 256 bytes of id.
//
// A message cut short, interleaved with a stray line, or closed twice
// ends unbalanced or with bytes after its end: End reports it.
type Follower struct {
	stack  []byte // the open containers, '{' or '['
	str    bool   // inside a string
	esc    int    // inside a string, an escape cut by a part: -1 its letter is next, 1-4 \u hex digits to come
	key    bool   // the string being read is a member name of the top-level object
	keyNxt bool   // at depth 1 of an object, a member name comes next
	name   []byte // that name so far (up to 8 bytes)
	idVal  bool   // the value being read is the top-level id's
	val    []byte // it so far
	id     []byte
	ended  bool // the top-level value closed
	err    error
}

// maxIDBytes bounds the id kept: a longer one is no id a client sent.
const maxIDBytes = 256

var errFollow = errors.New("not valid JSON")

// between marks the bytes that may stand outside strings in JSON.
var between = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n{}[]:,-+.eE0123456789truefalsn") {
		t[c] = true
	}
	return t
}()

// Write follows the next part of the message.
func (f *Follower) Write(p []byte) {
	for i := 0; i < len(p) && f.err == nil; {
		if f.str {
			i = f.inString(p, i)
			continue
		}
		c := p[i]
		i++
		if f.ended {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				f.err = errFollow
			}
			continue
		}
		if !between[c] && c != '"' || len(f.stack) == 0 && c != '{' && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			f.err = errFollow // a message is one object
			continue
		}
		top := len(f.stack) == 1 && f.stack[0] == '{'
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			f.str, f.esc = true, 0
			f.key = top && f.keyNxt
			if f.key {
				f.name, f.keyNxt = f.name[:0], false
			}
			if f.idVal {
				f.capture('"')
			}
		case '{', '[':
			if len(f.stack) >= jsoncheck.MaxDepth {
				f.err = jsoncheck.ErrTooDeep
				continue
			}
			f.stack = append(f.stack, c)
			f.keyNxt = c == '{' && len(f.stack) == 1
			f.idVal = false
		case '}', ']':
			n := len(f.stack)
			if n == 0 || (c == '}') != (f.stack[n-1] == '{') {
				f.err = errFollow
				continue
			}
			if top {
				f.endMember()
			}
			f.stack = f.stack[:n-1]
			f.ended = len(f.stack) == 0
		case ':':
			if top && !f.keyNxt {
				f.idVal, f.val = string(f.name) == `id"`, f.val[:0]
			}
		case ',':
			if top {
				f.endMember()
				f.keyNxt = true
			}
		default:
			if f.idVal {
				f.capture(c)
			}
		}
	}
}

// inString follows a string from p[i] and returns where to go on.
func (f *Follower) inString(p []byte, i int) int {
	for f.esc != 0 && i < len(p) { // complete an escape the last part cut
		c := p[i]
		switch {
		case f.esc == -1 && c == 'u':
			f.esc = 4
		case f.esc == -1 && (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't'):
			f.esc = 0
		case f.esc > 0 && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
			f.esc--
		default:
			f.err = errFollow
			return len(p)
		}
		f.keep(p[i : i+1])
		i++
	}
	if i >= len(p) {
		return i
	}
	n, err := jsoncheck.StringRest(p[i:])
	if err != nil {
		var se *jsoncheck.SyntaxError
		if !errors.As(err, &se) || se.Offset != len(p)-i {
			f.err = errFollow
			return len(p)
		}
		f.keep(p[i:])
		f.esc = cutEscape(p[i:])
		return len(p)
	}
	f.keep(p[i : i+n])
	f.str = false
	f.key = false
	return i + n
}

// keep records string bytes of a member name (its closing quote
// included) or of the id.
func (f *Follower) keep(b []byte) {
	if f.key {
		if len(f.name)+len(b) <= 8 { // longer names are not the id's
			f.name = append(f.name, b...)
		} else {
			f.name = append(f.name[:0], '?')
		}
	}
	if f.idVal {
		for _, c := range b {
			f.capture(c)
		}
	}
}

func (f *Follower) capture(c byte) {
	if len(f.val) >= maxIDBytes {
		f.idVal = false
		f.val = f.val[:0]
		return
	}
	f.val = append(f.val, c)
}

// endMember ends a top-level member: the id's value is kept.
func (f *Follower) endMember() {
	if f.idVal && f.id == nil && len(f.val) > 0 {
		f.id = append([]byte(nil), f.val...)
	}
	f.idVal = false
}

// cutEscape says how much of an escape is still to come when s, the
// content of a string so far, ends inside one: -1 its letter, 1-4 the
// hex digits of a \u escape, 0 none.
func cutEscape(s []byte) int {
	odd := func(end int) bool { // an odd run of backslashes ends at s[end-1]
		n := 0
		for end-1-n >= 0 && s[end-1-n] == '\\' {
			n++
		}
		return n%2 == 1
	}
	if odd(len(s)) {
		return -1
	}
	for h := 0; h <= 3; h++ {
		u := len(s) - h - 1
		if u < 1 || s[u] != 'u' {
			continue
		}
		hex := true
		for _, c := range s[u+1:] {
			hex = hex && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
		}
		if hex && odd(u) {
			return 4 - h
		}
	}
	return 0
}

// End reports the message's top-level id (raw JSON text, nil when it had
// none) once its last part was followed, or why it is no complete JSON
// value.
func (f *Follower) End() (id []byte, err error) {
	switch {
	case f.err != nil:
		return f.id, f.err
	case !f.ended:
		return f.id, errFollow // cut short
	}
	if f.id != nil && f.id[0] != '"' && !IsInteger(string(f.id)) {
		return nil, ErrInvalidID
	}
	return f.id, nil
}
