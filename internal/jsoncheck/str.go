package jsoncheck

import (
	"bytes"
	"encoding/binary"
)

// StringEnd checks the JSON string whose opening quote is at b[i] and
// returns the index just after its closing quote. Like encoding/json it
// does not check UTF-8 (the JSON-RPC layer checks it apart).
//
// Strings are the bulk of what is validated (a tool result is mostly one
// long string), and they come in two shapes. Short runs between escapes
// (logs, page snapshots: a \n or \" every few dozen bytes) are read
// eight bytes at a time, up to 32 bytes from where the last escape ended:
// a search call per escape cost more than the bytes. A run longer than
// that (a file's text, base64) goes to bytes.IndexByte, vectorised: the
// quote that ends the string, then a backslash before it.
//
// Each byte is searched once: the next quote, once found, is reused for
// every escape before it (it moves only when an escape consumed it, \"),
// and each backslash search stops at that quote. Searching for the quote
// again after every escape cost escapes x length: a 5 MiB file of 100-byte
// lines (one \n each) took 24 s through the shim (issue 17).
func StringEnd(b []byte, i int) (int, error) {
	i++
	q := -1 // b[q] is the first quote at or after i, when q >= i
	for {
		j, lim := i, min(len(b), i+32)
		if j < lim && plain[b[j]] { // not an escape right after an escape
			for j+8 <= lim && !special(binary.LittleEndian.Uint64(b[j:])) {
				j += 8
			}
			for j < lim && plain[b[j]] {
				j++
			}
		}
		if searched != nil {
			*searched += int64(j - i)
		}
		if j == lim && j < len(b) { // a long run
			if q < j {
				n := indexByte(b[j:], '"')
				if n < 0 {
					return len(b), fail(b, len(b), "")
				}
				q = j + n
			}
			seg := b[j:q]
			bs := indexByte(seg, '\\')
			if bs >= 0 {
				seg = seg[:bs]
			}
			if k := indexCtl(seg); k >= 0 {
				return j + k, fail(b, j+k, "invalid character in string literal")
			}
			if bs < 0 {
				return q + 1, nil
			}
			j += bs
		}
		switch {
		case j >= len(b):
			return j, fail(b, j, "")
		case b[j] == '"':
			return j + 1, nil
		case b[j] < 0x20:
			return j, fail(b, j, "invalid character in string literal")
		}
		i = j + 1 // a backslash at j: i at the escaped character
		if i >= len(b) {
			return i, fail(b, i, "")
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			for k := 1; k <= 4; k++ {
				if i+k >= len(b) {
					return i + k, fail(b, i+k, "")
				}
				if !isHex(b[i+k]) {
					return i + k, fail(b, i+k, "invalid character in \\u hexadecimal character escape")
				}
			}
			i += 5
		default:
			return i, fail(b, i, "invalid character in string escape code")
		}
	}
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// special reports whether one of the eight bytes of w may be a quote, a
// backslash or below 0x20 (a false alarm only beside a true one).
func special(w uint64) bool {
	return zeroByte(w^('"'*ones)) || zeroByte(w^('\\'*ones)) || (w-ctl)&^w&highs != 0
}

// zeroByte reports whether one of the eight bytes of w is 0.
func zeroByte(w uint64) bool { return (w-ones)&^w&highs != 0 }

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	ctl   = ones * 0x20
)

// indexCtl returns the index of the first byte below 0x20 in seg (JSON
// strings may not hold raw control characters), or -1: 32, then 8 bytes
// at a time while there is none, then byte by byte.
func indexCtl(seg []byte) int {
	i := 0
	for ; i+32 <= len(seg); i += 32 {
		w := seg[i : i+32 : i+32]
		a := binary.LittleEndian.Uint64(w[0:])
		b := binary.LittleEndian.Uint64(w[8:])
		c := binary.LittleEndian.Uint64(w[16:])
		d := binary.LittleEndian.Uint64(w[24:])
		if ((a-ctl)&^a|(b-ctl)&^b|(c-ctl)&^c|(d-ctl)&^d)&highs != 0 {
			break
		}
	}
	for ; i+8 <= len(seg); i += 8 {
		if v := binary.LittleEndian.Uint64(seg[i:]); (v-ctl)&^v&highs != 0 {
			break
		}
	}
	for ; i < len(seg); i++ {
		if seg[i] < 0x20 {
			return i
		}
	}
	return -1
}

// searched, when set (tests only), counts the bytes StringEnd's searches
// and loops examine: the linear-time tests bound it by the input's
// length, which no timing can do deterministically.
var searched *int64

// CountScanned runs f and returns how many bytes the string scans it
// caused examined: a deterministic measure of linear time for tests, here
// and in internal/jsonrpc. It is not safe while other goroutines validate.
func CountScanned(f func()) int64 {
	var n int64
	searched = &n
	defer func() { searched = nil }()
	f()
	return n
}

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

// StringRest is StringEnd for a string read in parts: b starts inside a
// string (after its opening quote, or where the previous part's scan
// stopped, past any escape it cut: a relay completes that itself). It
// returns the index just after the closing quote; or len(b) and a
// *SyntaxError at offset len(b) when b ends inside the string.
func StringRest(b []byte) (int, error) { return StringEnd(b, -1) }

// CutEscape says how much of an escape is still to come when s, the
// content of a string so far, ends inside one: -1 its letter, 1-4 the
// hex digits of a \u escape, 0 none.
func CutEscape(s []byte) int {
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
			hex = hex && isHex(c)
		}
		if hex && odd(u) {
			return 4 - h
		}
	}
	return 0
}
