package jsonrpc

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// follow feeds msg to a Follower in parts of n bytes.
func follow(msg string, n int) ([]byte, error) {
	m, err := followMsg(msg, n)
	return m.ID, err
}

// followMsg feeds msg to a Follower in parts of n bytes, and judges it.
func followMsg(msg string, n int) (Msg, error) {
	var f Follower
	b := []byte(msg)
	for len(b) > 0 {
		k := min(n, len(b))
		f.Write(b[:k])
		b = b[k:]
	}
	return f.End()
}

// TestFollower: whatever the parts, the Follower finds what Peek finds:
// the id of a whole message, and that a broken one is broken.
func TestFollower(t *testing.T) {
	text := strings.Repeat(`abc\n\"\\\u00e9\/ `, 40)
	good := []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`,
		`{"result":{"content":[{"type":"text","text":"` + text + `"}],"id":"not this"},"jsonrpc":"2.0","id":"a\"b"}`,
		` { "result" : [ 1 , -2.5e+3 , true , false , null , { "id" : 9 } ] , "id" : -12 } ` + "\r\n",
		`{"error":{"code":-32603,"message":"` + text + `"},"id":0,"jsonrpc":"2.0"}`,
	}
	for _, msg := range good {
		m, err := PeekAnyText(bytes.TrimSpace([]byte(msg)))
		if err != nil {
			t.Fatalf("fixture %.60q: %v", msg, err)
		}
		for _, n := range []int{1, 2, 3, 5, 7, 64, 1 << 20} {
			id, err := follow(msg, n)
			if err != nil || string(id) != string(m.ID) {
				t.Errorf("parts of %d of %.60q: id %q, %v; want %q", n, msg, id, err, m.ID)
			}
		}
	}
	bad := []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + text, // cut short
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b"}}}`,                                // closed twice
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b"]}`,                                 // mismatched
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b"}} and then some`,                   // bytes after
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b` + "\x01" + `"}}`,                   // control character
		`{"jsonrpc":"2.0","id":7,"result":{"a":"\x"}}`,                                // bad escape
		`{"jsonrpc":"2.0","id":7,"result":{"a":"\u12g4"}}`,                            // bad \u
		`{"jsonrpc":"2.0","id":7,"result":{"a":b}}`,                                   // bare word
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,                                      // not an integer id
		`{"jsonrpc":"2.0","id":7,"result":{"n":[tru]}}`,                               // a literal cut short (issue 30)
		`{"jsonrpc":"2.0","id":7,"result":{"n":1.2.3}}`,                               // no number
		`{"jsonrpc":"2.0","id":7,"result":{"n":--1}}`,                                 // no number
		`{"jsonrpc":"2.0","id":7,"result":{"n":[1,]}}`,                                // a comma with no value
		`{"jsonrpc":"2.0","id":7,"result":{"a" "b"}}`,                                 // no colon
		`{"result":{},"jsonrpc":"2.0"}`,                                               // no id
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),                       // too deep
	}
	for _, msg := range bad {
		for _, n := range []int{1, 3, 7, 1 << 20} {
			if id, err := follow(msg, n); err == nil {
				t.Errorf("parts of %d of %.80q: no error (id %q)", n, msg, id)
			}
		}
	}
}

// FuzzFollower: fed any message in parts of any size, the Follower
// judges it as Peek judges it whole: the same error, or the same kind, id
// (the first of duplicates, as Peek keeps it) and error flag, whatever the
// cuts; and what is no JSON by jsoncheck's rules it never accepts (issue
// 30: it skipped numbers and literals).
func FuzzFollower(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\nb\"c\\d\u00e9"}]}}`,
		`{"result":{"a":[1,2,{"id":3}]},"jsonrpc":"2.0","id":"x\"y"}`,
		`{"error":{"code":-1,"message":"m"},"id":-3}`,
		`{"id":1,"id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b"}`,
		`{"jsonrpc":"2.0","id":7,"result":{"a":"b"}}}`,
		`""{}`, // a value before the object (found by fuzzing)
	} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(7))
	}
	f.Add([]byte(`{"id":1,"result":[tru]}`), uint8(3))
	f.Add([]byte(`{"id":1,"result":1.2.3}`), uint8(2))
	f.Add([]byte(`{"id":1,"error":{"code":--1}}`), uint8(4))
	f.Add([]byte(`{"id":1,"method":"m","result":{}}`), uint8(4))
	f.Fuzz(func(t *testing.T, msg []byte, n uint8) {
		size := int(n%64) + 1
		got, err := followMsg(string(msg), size)
		want, perr := PeekAnyText(msg)
		if (err == nil) != (perr == nil) || err != nil && !errors.Is(err, perr) {
			t.Fatalf("parts of %d of %q: Follower %v, Peek %v", size, msg, err, perr)
		}
		if len(want.ID) > 256 { // too long to keep: no id a client sent
			want.ID = nil
		}
		if err == nil && (got.Kind != want.Kind || !bytes.Equal(got.ID, want.ID) || got.IsError != want.IsError) {
			t.Fatalf("parts of %d of %q: Follower %+v, Peek %+v", size, msg, got, want)
		}
		if (err == nil) != (jsoncheck.Valid(msg) == nil) && (err == nil || errors.Is(err, ErrNotJSON)) {
			t.Fatalf("parts of %d of %q: Follower %v, jsoncheck %v", size, msg, err, jsoncheck.Valid(msg))
		}
	})
}

// TestResponseHead: the first part of a long line begins a response as
// far as it goes, or does not.
func TestResponseHead(t *testing.T) {
	for head, want := range map[string]struct {
		id string
		ok bool
	}{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"xx`: {"7", true},
		`{"result":{"content":[{"text":"xx`:                        {"", true},
		` { "error" : { "message" : "xx`:                           {"", true},
		`{"jsonrpc":"2.0","id":"a","result":`:                      {`"a"`, true},
		`{"jsonrpc":"2.0","method":"x","params":{"a":"xx`:          {"", false},
		`{"jsonrpc":"2.0","id":7,"result":{}}`:                     {"7", false}, // whole: not a long line's head
		`{"jsonrpc":"2.0","id":1.5,"result":{"a":"xx`:              {"", false},
		`{"jsonrpc":"2.0","id":7,"result":{"a":x`:                  {"", false},
		`{"jsonrpc":"2.0","id":7,"resu`:                            {"", false},
		`{"jsonrpc":"2.0","id":7,"params":{"a":"xx`:                {"", false},
		`["jsonrpc"`: {"", false},
	} {
		id, ok := ResponseHead([]byte(head))
		if ok != want.ok || ok && string(id) != want.id {
			t.Errorf("ResponseHead(%q) = %q, %v; want %q, %v", head, id, ok, want.id, want.ok)
		}
	}
}
