package jsonrpc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
)

// validJSON reports whether b is one JSON value (RFC 8259) with optional
// surrounding white space. UTF-8 validity is checked apart (utf8.Valid).
//
// It replaces gjson.ValidBytes on the hot path: every message the shim or
// the bridge routes is validated once, and gjson's byte-at-a-time string
// scan was the shim's largest cost with 4 KiB messages. Strings, the bulk
// of MCP payloads, are scanned with vectorised byte searches.
func validJSON(b []byte) bool {
	i := skipWS(b, 0)
	i, ok := validValue(b, i, 0)
	if !ok {
		return false
	}
	return skipWS(b, i) == len(b)
}

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

func skipWS(b []byte, i int) int {
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

func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return validString(b, i)
	case c == '{':
		if depth >= maxDepth {
			return i, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = validString(b, i); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = validValue(b, skipWS(b, i+1), depth+1); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == '}' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
	case c == '[':
		if depth >= maxDepth {
			return i, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = validValue(b, i, depth+1); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ']' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return validNumber(b, i)
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func validNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false
		}
	}
	return i, true
}

const (
	lo7 = 0x0101010101010101
	hi  = 0x8080808080808080
	ctl = lo7 * 0x20
)

// hasCtl reports whether seg holds a byte below 0x20 (JSON strings may not
// hold raw control characters), eight bytes at a time.
func hasCtl(seg []byte) bool {
	i := 0
	for ; i+32 <= len(seg); i += 32 {
		w := seg[i : i+32 : i+32]
		a := binary.LittleEndian.Uint64(w[0:])
		b := binary.LittleEndian.Uint64(w[8:])
		c := binary.LittleEndian.Uint64(w[16:])
		d := binary.LittleEndian.Uint64(w[24:])
		if ((a-ctl)&^a|(b-ctl)&^b|(c-ctl)&^c|(d-ctl)&^d)&hi != 0 {
			return true
		}
	}
	for ; i+8 <= len(seg); i += 8 {
		v := binary.LittleEndian.Uint64(seg[i:])
		if (v-ctl)&^v&hi != 0 {
			return true
		}
	}
	for ; i < len(seg); i++ {
		if seg[i] < 0x20 {
			return true
		}
	}
	return false
}

// validString checks the string starting at b[i] == '"' and returns the
// index after its closing quote. The quote and backslash searches use
// bytes.IndexByte (vectorised); only the control-character check is a
// plain loop.
//
// Each byte is searched once: the next quote, once found, is reused for
// every escape before it (it moves only when an escape consumed it, \"),
// and each backslash search stops at that quote. Searching for the quote
// again after every escape cost escapes x length: a 5 MiB file of 100-byte
// lines (one \n each) took 24 s through the shim (issue 17). The first
// bytes after an escape are looked at one by one: in escape-dense text
// (page snapshots, logs) a search call per escape cost more than the bytes.
func validString(b []byte, i int) (int, bool) {
	i++
	q := -1 // b[q] is the first quote at or after i, when q >= i
	for {
		if q < i {
			n := indexByte(b[i:], '"')
			if n < 0 {
				return len(b), false
			}
			q = i + n
		}
		j, end := i, min(q, i+16)
		for j < end && b[j] != '\\' && b[j] >= 0x20 {
			j++
		}
		if searched != nil {
			*searched += int64(j - i)
		}
		switch {
		case j < end && b[j] < 0x20:
			return j, false
		case j < end: // a backslash
		case j == q:
			return q + 1, true
		default: // a longer run
			seg := b[j:q]
			bs := indexByte(seg, '\\')
			if bs >= 0 {
				seg = seg[:bs]
			}
			if hasCtl(seg) {
				return j, false
			}
			if bs < 0 {
				return q + 1, true
			}
			j += bs
		}
		i = j + 1 // at the escaped character
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if len(b)-i < 5 {
				return i, false
			}
			for _, h := range b[i+1 : i+5] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return i, false
				}
			}
			i += 5
		default:
			return i, false
		}
	}
}

// searched, when set (tests only), counts the bytes validString's
// searches and loops examine: TestScanLinear bounds it by the input's
// length, which no timing can do deterministically.
var searched *int64

func indexByte(b []byte, c byte) int {
	n := bytes.IndexByte(b, c)
	if searched != nil {
		if n < 0 {
			*searched += int64(len(b))
		} else {
			*searched += int64(n + 1)
		}
	}
	return n
}

// member is one top-level member of a message object: the spans of its
// key (without quotes) and value in the line.
type member struct {
	found          bool
	escapedKey     bool
	valStart, valE int
}

// topMembers validates b (as validJSON does) and, when it is an object,
// returns the first occurrence of the members a router needs. It is the
// validator and the peek in one pass.
func topMembers(b []byte) (obj bool, id, method, result, errv member, ok bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		// Not an object: only whether it is valid JSON matters.
		return false, id, method, result, errv, validJSON(b)
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true, id, method, result, errv, skipWS(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return
		}
		ks := i + 1
		ke, okk := validString(b, i)
		if !okk {
			return
		}
		key := b[ks : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return
		}
		vs := skipWS(b, i+1)
		ve, okv := validValue(b, vs, 1)
		if !okv {
			return
		}
		var m *member
		k := string(key)
		if bytes.IndexByte(key, '\\') >= 0 {
			k = unquoteKey(b[ks-1 : ke])
		}
		switch k {
		case "id":
			m = &id
		case "method":
			m = &method
		case "result":
			m = &result
		case "error":
			m = &errv
		}
		if m != nil && !m.found {
			*m = member{found: true, valStart: vs, valE: ve}
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return
		}
		if b[i] == '}' {
			return true, id, method, result, errv, skipWS(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return
		}
		i = skipWS(b, i+1)
	}
}

func unquoteKey(q []byte) string {
	var s string
	if json.Unmarshal(q, &s) != nil {
		return ""
	}
	return s
}
