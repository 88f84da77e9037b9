// Package jsoncheck is the one validation every untrusted JSON document
// goes through before anything parses it: hook payloads (up to 64 MiB on
// stdin) and the config files a cloned repository or another program may
// have written (.mcp.json, ~/.claude.json, settings files), a remote
// server's bodies, and every JSON-RPC message the shim and the bridge
// route (internal/jsonrpc checks each member's value with ValueEnd).
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

import "fmt"

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
	i, err := ValueEnd(data, SkipWS(data, 0), 0)
	if err != nil {
		return err
	}
	if i = SkipWS(data, i); i != len(data) {
		return fail(data, i, "invalid character after top-level value")
	}
	return nil
}

// ValueEnd checks the one JSON value that starts at b[i] (no white space
// before it) and returns the index just after it. depth is how many
// arrays and objects already enclose it, so that the whole document is
// held to MaxDepth: the JSON-RPC scanner (internal/jsonrpc) reads a
// message's top-level members itself and checks each value here, at
// depth 1. Errors are *SyntaxError with offsets into b.
func ValueEnd(b []byte, i, depth int) (int, error) {
	v := validator{b: b}
	return v.run(i, MaxDepth-depth)
}

type validator struct{ b []byte }

func fail(b []byte, i int, msg string) error {
	if i >= len(b) {
		return &SyntaxError{Offset: len(b), Msg: "unexpected end of JSON input"}
	}
	return &SyntaxError{Offset: i, Msg: fmt.Sprintf("%s (found %q)", msg, b[i])}
}

func (v *validator) fail(i int, msg string) error { return fail(v.b, i, msg) }

// run alternates two steps until the value at i is complete: read a
// value (a scalar, or the opening of a container), then what may follow
// a value (a comma, or closing brackets).
func (v *validator) run(i, max int) (int, error) {
	b := v.b
	// The open containers, '[' or '{', at most max. A local array holds
	// those of a document of ordinary depth without an allocation (kept
	// in the struct, it escaped to the heap: one allocation per call).
	var room [64]byte
	stack := room[:0]
	for {
		// A value starts at i.
		if i >= len(b) {
			return i, v.fail(i, "")
		}
		var err error
		switch c := b[i]; c {
		case '[', '{':
			if len(stack) >= max {
				return i, &SyntaxError{Offset: i, Msg: ErrTooDeep.Error(), err: ErrTooDeep}
			}
			stack = append(stack, c)
			i = SkipWS(b, i+1)
			if i < len(b) && b[i] == closer(c) {
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, err = v.key(i); err != nil {
					return i, err
				}
			}
			continue
		case '"':
			i, err = StringEnd(b, i)
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
			return i, err
		}
		// A value ended at i: close containers until one goes on.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = SkipWS(b, i)
			if i >= len(b) {
				return i, v.fail(i, "")
			}
			top := stack[len(stack)-1]
			if b[i] == closer(top) {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return i, v.fail(i, "invalid character after "+kind(top)+" element")
			}
			i = SkipWS(b, i+1)
			if top == '{' {
				if i, err = v.key(i); err != nil {
					return i, err
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
	i, err := StringEnd(v.b, i)
	if err != nil {
		return i, err
	}
	i = SkipWS(v.b, i)
	if i >= len(v.b) || v.b[i] != ':' {
		return i, v.fail(i, "invalid character after object key")
	}
	return SkipWS(v.b, i+1), nil
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

// SkipWS returns the index of the first byte from i on that is not JSON
// white space.
func SkipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
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
