package claudecfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// SyntaxError is a config file that is not valid JSON (or not a JSON
// object), with the position of the first problem. Nothing touches such a
// file.
type SyntaxError struct {
	File      string // may be empty for in-memory data
	Line, Col int    // 1-based; Col counts characters, not bytes
	Msg       string
}

func (e *SyntaxError) Error() string {
	f := e.File
	if f == "" {
		f = "<input>"
	}
	return fmt.Sprintf("%s:%d:%d: invalid JSON: %s", f, e.Line, e.Col, e.Msg)
}

// Check reports whether data is a JSON object, returning a *SyntaxError with
// the line and column of the first problem otherwise. Every config file
// goes through it (jsoncheck) before gjson reads it: a file nested deeper
// than jsoncheck.MaxDepth would overflow gjson's recursion.
func Check(file string, data []byte) error {
	verr := jsoncheck.Valid(data)
	if verr == nil {
		r := gjson.ParseBytes(data)
		if r.IsObject() {
			return nil
		}
		off := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		line, col := position(data, off)
		return &SyntaxError{File: file, Line: line, Col: col, Msg: "the top level is not an object"}
	}
	var se *jsoncheck.SyntaxError
	if errors.Is(verr, jsoncheck.ErrTooDeep) && errors.As(verr, &se) {
		line, col := position(data, se.Offset)
		return &SyntaxError{File: file, Line: line, Col: col, Msg: jsoncheck.ErrTooDeep.Error()}
	}
	// encoding/json (which has the same depth limit and no recursion in
	// its check) says in its words what the problem is.
	var v any
	err := json.Unmarshal(data, &v)
	var jse *json.SyntaxError
	off := len(data)
	msg := "malformed"
	switch {
	case errors.As(err, &jse):
		off = int(jse.Offset) - 1 // Offset is just past the offending byte
		if strings.Contains(jse.Error(), "unexpected end") {
			off = len(data) // ran out of input: point past the end
		}
		msg = jse.Error()
	case err != nil:
		msg = err.Error()
	}
	if off < 0 {
		off = 0
	}
	if len(bytes.TrimSpace(data)) == 0 {
		msg = "empty file"
	}
	line, col := position(data, off)
	return &SyntaxError{File: file, Line: line, Col: col, Msg: msg}
}

// position converts a byte offset to a 1-based line and character column.
func position(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, utf8.RuneCount(data[start:off]) + 1
}

// Member is one key of a JSON object with absolute byte offsets.
type Member struct {
	Key  string
	KRaw gjson.Result // the key token (Index = its offset)
	Val  gjson.Result // the value (Index = its offset in the whole document)
}

// root parses data keeping absolute offsets.
func root(data []byte) gjson.Result {
	return gjson.ParseBytes(data) // Index is the offset of the value, past leading space
}

// Members lists an object's keys in file order. Duplicate keys are all
// returned; JavaScript's JSON.parse (Claude Code) keeps the last one.
func Members(obj gjson.Result) []Member {
	if !obj.IsObject() {
		return nil
	}
	var out []Member
	obj.ForEach(func(k, v gjson.Result) bool {
		out = append(out, Member{Key: k.String(), KRaw: k, Val: v})
		return true
	})
	return out
}

// LastMember returns the last member named key (what JSON.parse keeps).
func LastMember(obj gjson.Result, key string) (Member, bool) {
	var m Member
	ok := false
	for _, x := range Members(obj) {
		if x.Key == key {
			m, ok = x, true
		}
	}
	return m, ok
}

// At walks path from the document root through object keys.
func At(data []byte, path []string) (gjson.Result, bool) {
	r := root(data)
	for _, k := range path {
		m, ok := LastMember(r, k)
		if !ok {
			return gjson.Result{}, false
		}
		r = m.Val
	}
	return r, r.Exists()
}

// JSONString encodes s the way JSON.stringify does (no HTML escaping).
func JSONString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}

// StringArray returns v's string elements; ok is false when v is not an
// array of strings.
func StringArray(v gjson.Result) ([]string, bool) {
	if !v.Exists() {
		return nil, true
	}
	if !v.IsArray() {
		return nil, false
	}
	var out []string
	ok := true
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type != gjson.String {
			ok = false
			return false
		}
		out = append(out, e.String())
		return true
	})
	return out, ok
}

// StringMap returns an object of strings as a map and its keys in order.
func StringMap(v gjson.Result) (map[string]string, []string) {
	if !v.IsObject() {
		return nil, nil
	}
	m := map[string]string{}
	var keys []string
	for _, x := range Members(v) {
		if _, dup := m[x.Key]; !dup {
			keys = append(keys, x.Key)
		}
		m[x.Key] = x.Val.String()
	}
	return m, keys
}
