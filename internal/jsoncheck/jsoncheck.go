// Package jsoncheck is the one validation every untrusted JSON document
// goes through before anything parses it: hook payloads (up to 64 MiB on
// stdin) and the config files a cloned repository or another program may
// have written (.mcp.json, ~/.claude.json, settings files).
//
// gjson.ValidBytes and gjson's getters recurse once per level of nesting,
// so 10 million nested arrays in 20 MB overflowed the Go stack: a fatal
// error no recover catches, exit status 2 (the one that blocks a
// PreToolUse call), a gigabyte of stack and a long trace. Valid walks the
// document with a loop and an explicit stack of at most MaxDepth bytes:
// linear time, memory bounded by MaxDepth, whatever the input. A document
// it accepts is shallow enough for every recursive parser behind it.
// (encoding/json alone is safe: it checks a document with an iterative
// scanner, to the same depth, before it decodes; gjson checks nothing.)
package jsoncheck

import (
	"encoding/binary"
	"fmt"
)

// MaxDepth is the deepest nesting of arrays and objects Valid accepts:
// encoding/json's own limit, so Valid and json.Valid agree on every input.
// Real payloads and configs nest a dozen levels; 10000 levels of Go
// recursion (gjson, encoding/json) take a few MiB of stack.
const MaxDepth = 10000

// ErrTooDeep is a document nested deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("nested deeper than %d levels", MaxDepth)

// SyntaxError is why a document is not valid JSON and where: Offset is
// the byte offset of the first byte that makes it invalid (len(data) when
// the data ended too soon).
type SyntaxError struct {
	Offset int
	Msg    string
	err    error // ErrTooDeep, when that is the reason
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// Unwrap lets errors.Is find ErrTooDeep.
func (e *SyntaxError) Unwrap() error { return e.err }

// Valid returns nil when data is one JSON value (RFC 8259) with optional
// white space around it, nested at most MaxDepth deep; otherwise a
// *SyntaxError. Like encoding/json it does not check that strings are
// valid UTF-8.
func Valid(data []byte) error {
	var room [64]byte // the stack of a document of ordinary depth, without an allocation
	v := validator{b: data, stack: room[:0]}
	return v.run()
}

type validator struct {
	b     []byte
	stack []byte // the open containers, '[' or '{'; at most MaxDepth
}

func (v *validator) fail(i int, msg string) error {
	if i >= len(v.b) {
		return &SyntaxError{Offset: len(v.b), Msg: "unexpected end of JSON input"}
	}
	return &SyntaxError{Offset: i, Msg: fmt.Sprintf("%s (found %q)", msg, v.b[i])}
}

// run alternates two steps until the top-level value is complete: read a
// value (a scalar, or the opening of a container), then what may follow
// a value (a comma, or closing brackets).
func (v *validator) run() error {
	b := v.b
	i := skipWS(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return v.fail(i, "")
		}
		var err error
		switch c := b[i]; c {
		case '[', '{':
			if len(v.stack) >= MaxDepth {
				return &SyntaxError{Offset: i, Msg: ErrTooDeep.Error(), err: ErrTooDeep}
			}
			v.stack = append(v.stack, c)
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == closer(c) {
				v.stack = v.stack[:len(v.stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, err = v.key(i); err != nil {
					return err
				}
			}
			continue
		case '"':
			i, err = v.str(i)
		case 't':
			i, err = v.lit(i, "true")
		case 'f':
			i, err = v.lit(i, "false")
		case 'n':
			i, err = v.lit(i, "null")
		default:
			i, err = v.num(i)
		}
		if err != nil {
			return err
		}
		// A value ended at i: close containers until one goes on.
		for {
			i = skipWS(b, i)
			if len(v.stack) == 0 {
				if i != len(b) {
					return v.fail(i, "invalid character after top-level value")
				}
				return nil
			}
			if i >= len(b) {
				return v.fail(i, "")
			}
			top := v.stack[len(v.stack)-1]
			if b[i] == closer(top) {
				v.stack = v.stack[:len(v.stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return v.fail(i, "invalid character after "+kind(top)+" element")
			}
			i = skipWS(b, i+1)
			if top == '{' {
				if i, err = v.key(i); err != nil {
					return err
				}
			}
			break
		}
	}
}

// key reads an object key and its colon at i, returning where the value
// starts.
func (v *validator) key(i int) (int, error) {
	if i >= len(v.b) || v.b[i] != '"' {
		return i, v.fail(i, "invalid character looking for beginning of object key string")
	}
	i, err := v.str(i)
	if err != nil {
		return i, err
	}
	i = skipWS(v.b, i)
	if i >= len(v.b) || v.b[i] != ':' {
		return i, v.fail(i, "invalid character after object key")
	}
	return skipWS(v.b, i+1), nil
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroByte reports whether one of the eight bytes of w is 0.
func zeroByte(w uint64) bool { return (w-ones)&^w&highs != 0 }

// skipPlain returns the index of the first byte from i on that is not
// plain: eight bytes at a time while none of them is a quote, a backslash
// or below 0x20 (the bulk of a long string), then byte by byte.
func skipPlain(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if zeroByte(w^('"'*ones)) || zeroByte(w^('\\'*ones)) || (w-0x20*ones)&^w&highs != 0 {
			break
		}
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

// str reads the string whose opening quote is at i.
func (v *validator) str(i int) (int, error) {
	b := v.b
	for i++; i < len(b); i++ {
		i = skipPlain(b, i)
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return i, v.fail(i, "invalid character in string literal")
		case c == '\\':
			i++
			if i >= len(b) {
				return i, v.fail(i, "")
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 0; k < 4; k++ {
					i++
					if i >= len(b) {
						return i, v.fail(i, "")
					}
					if !isHex(b[i]) {
						return i, v.fail(i, "invalid character in \\u hexadecimal character escape")
					}
				}
			default:
				return i, v.fail(i, "invalid character in string escape code")
			}
		}
	}
	return i, v.fail(i, "")
}

// lit reads the literal word at i.
func (v *validator) lit(i int, word string) (int, error) {
	for k := 0; k < len(word); k++ {
		if i+k >= len(v.b) {
			return i + k, v.fail(i+k, "")
		}
		if v.b[i+k] != word[k] {
			return i + k, v.fail(i+k, "invalid character in literal "+word)
		}
	}
	return i + len(word), nil
}

// num reads the number at i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *validator) num(i int) (int, error) {
	b := v.b
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, v.fail(i, "")
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, v.fail(i, "invalid character looking for beginning of value")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, v.fail(i, "invalid character after decimal point in numeric literal")
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, v.fail(i, "invalid character in exponent of numeric literal")
		}
		i = digits(b, i)
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func closer(open byte) byte {
	if open == '[' {
		return ']'
	}
	return '}'
}

func kind(open byte) string {
	if open == '[' {
		return "array"
	}
	return "object key:value pair"
}
