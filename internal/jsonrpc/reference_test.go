package jsonrpc

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// peekGJSON is the reference Peek: validate with gjson, then look each
// routing member up. Simple and slow (each lookup rescans the object); Peek
// must agree with it on every input.
func peekGJSON(line []byte) (Msg, error) {
	if !utf8.Valid(line) {
		return Msg{}, ErrNotUTF8
	}
	if !gjson.ValidBytes(line) {
		return Msg{}, ErrNotJSON
	}
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return Msg{Kind: KindBatch}, nil
	} else if len(t) == 0 || t[0] != '{' {
		return Msg{}, ErrNotJSONRPC
	}
	res := gjson.GetManyBytes(line, "id", "method", "result", "error")
	id, method, result, errv := res[0], res[1], res[2], res[3]
	var m Msg
	if id.Exists() {
		switch id.Type {
		case gjson.String:
		case gjson.Number:
			if !IsInteger(id.Raw) {
				return Msg{}, ErrInvalidID
			}
		case gjson.Null:
			if method.Exists() {
				return Msg{}, ErrInvalidID
			}
		default:
			return Msg{}, ErrInvalidID
		}
		m.ID = []byte(id.Raw)
	}
	switch {
	case method.Exists():
		if method.Type != gjson.String {
			return Msg{}, ErrNotJSONRPC
		}
		if method.Str == "" {
			return Msg{}, ErrEmptyMethod
		}
		m.Method = method.Str
		m.Kind = KindNotification
		if id.Exists() {
			m.Kind = KindRequest
		}
	case result.Exists() || errv.Exists():
		if !id.Exists() {
			return Msg{}, ErrNotJSONRPC
		}
		m.Kind = KindResponse
		m.IsError = errv.Exists()
	default:
		return Msg{}, ErrNotJSONRPC
	}
	return m, nil
}

// FuzzPeekAgainstGJSON checks the one-pass Peek agrees with peekGJSON, the
// straightforward reference below.
func FuzzPeekAgainstGJSON(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want, werr := peekGJSON(line)
		got, gerr := Peek(line)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: peekGJSON err %v, Peek err %v", line, werr, gerr)
		}
		if werr != nil {
			return
		}
		if got.Kind != want.Kind || got.Method != want.Method || !bytes.Equal(got.ID, want.ID) || got.IsError != want.IsError {
			t.Fatalf("%q: got %+v, want %+v", line, got, want)
		}
	})
}

func TestPeekAgainstGJSONCases(t *testing.T) {
	for _, s := range []string{
		`{"\u0069d":1,"method":"m"}`, `{"id":1,"id":2,"method":"m"}`, `{"method":"a\u0062"}`,
		`{"id":1,"result":1,"method":"x"}`, `{"id":"x","error":{}}`, `{"id":1e3,"method":"m"}`,
		`{"id":true,"method":"m"}`, `{"id":null,"result":1}`, `{"method":1}`, `[]`, `"s"`, `{} x`,
	} {
		want, werr := peekGJSON([]byte(s))
		got, gerr := Peek([]byte(s))
		if (werr == nil) != (gerr == nil) || got.Kind != want.Kind || got.Method != want.Method || !bytes.Equal(got.ID, want.ID) {
			t.Errorf("%s: got %+v %v, want %+v %v", s, got, gerr, want, werr)
		}
	}
}
