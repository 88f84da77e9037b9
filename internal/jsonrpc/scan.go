package jsonrpc

import (
	"bytes"
	"encoding/json"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// The validation is jsoncheck's, the one every untrusted JSON document
// goes through (hook payloads, config files, remote bodies): one
// algorithm, one depth limit, fuzzed against encoding/json. The scanner
// here only walks a message's top-level members itself, to note the ones
// a router needs, and hands each value to jsoncheck.ValueEnd.
//
// It replaced gjson.ValidBytes on the hot path: every message the shim or
// the bridge routes is validated once, and gjson's byte-at-a-time string
// scan was the shim's largest cost with 4 KiB messages.

// validJSON reports whether b is one JSON value (RFC 8259) with optional
// surrounding white space. UTF-8 validity is checked apart (utf8.Valid).
func validJSON(b []byte) bool { return jsoncheck.Valid(b) == nil }

func skipWS(b []byte, i int) int { return jsoncheck.SkipWS(b, i) }

// validValue checks the value at b[i], inside depth containers.
func validValue(b []byte, i, depth int) (int, bool) {
	end, err := jsoncheck.ValueEnd(b, i, depth)
	return end, err == nil
}

func validString(b []byte, i int) (int, bool) {
	end, err := jsoncheck.StringEnd(b, i)
	return end, err == nil
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
