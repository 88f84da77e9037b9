package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// follow feeds msg to a Follower in parts of n bytes.
func follow(msg string, n int) ([]byte, error) {
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
		`{"result":{},"jsonrpc":"2.0"}`, // no id: routed as no one's
	}
	for _, msg := range good {
		m, err := PeekAnyText(bytes.TrimSpace([]byte(msg)))
		if err == ErrNotJSONRPC { // valid JSON with no id: the Follower finds none
			err = nil
		}
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

// TestCutEscape: how much of an escape a string's content still owes.
func TestCutEscape(t *testing.T) {
	for s, want := range map[string]int{
		`abc`: 0, `abc\`: -1, `abc\\`: 0, `abc\\\`: -1, `a\u`: 4, `a\u1`: 3, `a\u12`: 2, `a\u123`: 1,
		`a\u1234`: 0, `a\\u12`: 0, `a\\\u1`: 3, `u12`: 0, `\n`: 0,
	} {
		if got := cutEscape([]byte(s)); got != want {
			t.Errorf("cutEscape(%q) = %d, want %d", s, got, want)
		}
	}
}

// FuzzFollower: fed any message in parts of any size, the Follower
// accepts every message Peek accepts, with the id Peek finds (the first
// of duplicates, as Peek keeps it), whatever the cuts; a message that is
// not one JSON value it never accepts when the value is cut short or
// followed by more.
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
	f.Fuzz(func(t *testing.T, msg []byte, n uint8) {
		size := int(n%64) + 1
		id, err := follow(string(msg), size)
		m, perr := PeekAnyText(msg)
		if perr == nil && m.Kind == KindResponse {
			if err != nil || !bytes.Equal(id, m.ID) {
				t.Fatalf("parts of %d of %q: id %q, %v; Peek: %q", size, msg, id, err, m.ID)
			}
		}
		if err == nil && !json.Valid(msg) {
			// Only what the Follower does not check may differ: numbers
			// and literals between strings.
			var v any
			d := json.NewDecoder(bytes.NewReader(msg))
			if d.Decode(&v) == nil && d.More() {
				t.Fatalf("parts of %d of %q: accepted a value followed by more", size, msg)
			}
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
