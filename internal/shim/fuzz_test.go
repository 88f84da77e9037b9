package shim

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// FuzzReplaceID checks the id splice used for server->client request
// remapping and injected requests: the result is valid, carries the new id,
// and everything else is unchanged.
func FuzzReplaceID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"roots/list","params":{"id":5}}`), int64(7))
	f.Add([]byte(`{"params":{"id":"inner"},"id":"outer","method":"x","jsonrpc":"2.0"}`), int64(-1))
	f.Add([]byte(` { "id" : "a\"b" , "result" : {} } `), int64(123456789))
	f.Fuzz(func(t *testing.T, line []byte, n int64) {
		m, err := jsonrpc.Peek(line)
		if err != nil || m.ID == nil || m.Kind == jsonrpc.KindBatch {
			return
		}
		id := itoaID(n)
		out := replaceID(line, id)
		m2, err := jsonrpc.Peek(out)
		if err != nil {
			t.Fatalf("replaceID(%q) = %q: %v", line, out, err)
		}
		if !bytes.Equal(m2.ID, id) || m2.Kind != m.Kind || m2.Method != m.Method {
			t.Fatalf("replaceID(%q) = %q: got id %s kind %v", line, out, m2.ID, m2.Kind)
		}
		var a, b map[string]json.RawMessage
		json.Unmarshal(line, &a)
		json.Unmarshal(out, &b)
		delete(a, "id")
		delete(b, "id")
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if bytes.Count(line, []byte(`"id"`)) < 2 && !bytes.Equal(ja, jb) {
			t.Fatalf("replaceID changed more than the id: %q -> %q", line, out)
		}
	})
}

// FuzzPeekLine checks the one-pass peek agrees with jsonrpc.Peek.
func FuzzPeekLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"a"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`,
		`{"jsonrpc":"2.0","method":"n","params":[1,2]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
		`{"id":1.5,"method":"a"}`,
		`{"method":"\u0061","id":"\u00e9"}`,
		`{"params":{"id":2},"method":"m"}`,
		`{"method":""}`, `not json`, `{}`, `7`, ` {"id" : -0 , "method":"m"} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		want, werr := jsonrpc.Peek(line)
		got, gerr := peekLine(line)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: jsonrpc.Peek err %v, peekLine err %v", line, werr, gerr)
		}
		if werr != nil {
			return
		}
		if got.Kind != want.Kind || got.Method != want.Method || !bytes.Equal(got.ID, want.ID) || got.IsError != want.IsError {
			t.Fatalf("%q: got %+v, want %+v", line, got, want)
		}
	})
}

// FuzzValidJSON checks the shim's validator agrees with encoding/json.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2.5e-3,-0,true,false,null,"x\u00e9\n"]}`, `{"a":}`, `[1,]`, `01`, `1.`, `"\x"`,
		`"abcdefghijklmnop\"qrstuvwxyz"`, "\"tab\there\"", `  {} `, `{"a":1}{}`, `-`, `"\ud83d"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return
		}
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func TestPeekLineCases(t *testing.T) {
	for _, s := range []string{
		`{"\u0069d":1,"method":"m"}`, `{"id":1,"id":2,"method":"m"}`, `{"method":"a\u0062"}`,
		`{"id":1,"result":1,"method":"x"}`, `{"id":"x","error":{}}`, `{"id":1e3,"method":"m"}`,
		`{"id":true,"method":"m"}`, `{"id":null,"result":1}`, `{"method":1}`, `[]`, `"s"`, `{} x`,
	} {
		want, werr := jsonrpc.Peek([]byte(s))
		got, gerr := peekLine([]byte(s))
		if (werr == nil) != (gerr == nil) || got.Kind != want.Kind || got.Method != want.Method || !bytes.Equal(got.ID, want.ID) {
			t.Errorf("%s: got %+v %v, want %+v %v", s, got, gerr, want, werr)
		}
	}
}
