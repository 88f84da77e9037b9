package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReader checks that Reader returns exactly the newline-separated
// lines of its input (a trailing "\r" removed), however the input is cut
// into reads.
func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\r\n"), 3)
	f.Add([]byte("no newline at end"), 1)
	f.Add(bytes.Repeat([]byte("x"), 200<<10), 7)
	f.Add([]byte("\n\n\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		r, want := cutReader(in, chunk)
		readAll(t, NewReader(r), want, func(i int, got []byte, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want[i]) {
				t.Fatalf("line %d: got %q", i, got)
			}
		})
	})
}

// readAll reads jr to its end and calls check on each line it returns (or
// its error), the i-th of want being what it should be. It fails t when jr
// returns more lines than want or fewer.
func readAll(t *testing.T, jr *Reader, want [][]byte, check func(i int, got []byte, err error)) {
	t.Helper()
	for i := 0; ; i++ {
		got, err := jr.Next()
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Fatalf("got %d lines, want %d", i, len(want))
			}
			return
		}
		if i >= len(want) {
			t.Fatalf("extra line %q, %v", got, err)
		}
		check(i, got, err)
	}
}

// cutReader reads in cut into reads as chunk picks (half reads, one byte
// at a time, or whole), with the lines a Reader must return: in split at
// each newline, a trailing "\r" removed.
func cutReader(in []byte, chunk int) (io.Reader, [][]byte) {
	var r io.Reader = bytes.NewReader(in)
	if chunk%2 == 1 {
		r = iotest.HalfReader(r)
	}
	if chunk%3 == 0 {
		r = iotest.OneByteReader(r)
	}
	var want [][]byte
	rest := in
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:i], rest[i+1:]
		}
		want = append(want, bytes.TrimSuffix(line, []byte{'\r'}))
	}
	return r, want
}

// FuzzPeek checks Peek never panics and agrees with encoding/json about
// what it accepts.
func FuzzPeek(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Peek(line)
		if err != nil {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("Peek accepted invalid JSON %q", line)
		}
		if m.Kind == KindBatch {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("accepted %q but it is not an object: %v", line, err)
		}
		if id, ok := obj["id"]; ok {
			if !bytes.Equal(bytes.TrimSpace(id), m.ID) {
				// Duplicate keys: encoding/json keeps the last, gjson the first.
				if bytes.Count(line, []byte(`"id"`)) < 2 {
					t.Fatalf("id: got %q, want %q", m.ID, id)
				}
			}
		} else if m.ID != nil {
			t.Fatalf("id %q found where there is none", m.ID)
		}
		_, hasMethod := obj["method"]
		switch m.Kind {
		case KindRequest:
			if !hasMethod || m.ID == nil {
				t.Fatalf("request without method or id: %q", line)
			}
		case KindNotification:
			if !hasMethod || m.ID != nil {
				t.Fatalf("bad notification: %q", line)
			}
		case KindResponse:
			if m.ID == nil {
				t.Fatalf("response without id: %q", line)
			}
		}
	})
}

// peekSeeds are the seed lines of the fuzz tests of Peek: each kind of
// message, a batch, ids of every type, escapes, invalid UTF-8, and lines
// that are not JSON-RPC or not JSON.
var peekSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"a"}`,
	`{"jsonrpc":"2.0","id":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`,
	`{"jsonrpc":"2.0","method":"n","params":[1,2]}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
	`{"id":1.5,"method":"a"}`,
	`{"id":{},"method":"a"}`,
	`{"method":"\u0061","id":"\u00e9"}`,
	`{"params":{"id":2},"method":"m"}`,
	`{"method":""}`,
	`not json`,
	`{}`,
	`7`,
	"{\"id\":\"\xff\"}",
	` {"id" : -0 , "method":"m"} `,
}
