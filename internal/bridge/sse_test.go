package bridge

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

func TestSSEReader(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	in := ": keep-alive\n\n" +
		"id: 1\nretry: 2500\ndata:\n\n" + // SEP-1699 priming event
		"event: endpoint\ndata: /message?sessionId=abc\n\n" +
		"id: 2\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" +
		"data:{\"big\":\"" + big + "\"}\n\n" +
		"id\ndata: x\n\n" + // id with no value resets it
		"data: cut off at the end"
	r := newSSEReader(strings.NewReader(in))
	want := []event{
		{ID: "1", HasID: true, Retry: 2500 * time.Millisecond, Data: []byte{}},
		{Name: "endpoint", Data: []byte("/message?sessionId=abc")},
		{ID: "2", HasID: true, Data: []byte("{\"a\":\n1}")},
		{Data: []byte(`{"big":"` + big + `"}`)},
		{ID: "", HasID: true, Data: []byte("x")},
	}
	for i, w := range want {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got.ID != w.ID || got.HasID != w.HasID || got.Name != w.Name || got.Retry != w.Retry || !bytes.Equal(got.Data, w.Data) {
			t.Errorf("event %d: got %+v, want %+v", i, trunc(got), trunc(w))
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last event: got %v, want io.EOF (a cut-off event is dropped)", err)
	}
}

func trunc(e event) event {
	if len(e.Data) > 40 {
		e.Data = e.Data[:40]
	}
	return e
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{"{\n  \"a\": \"x\\ny\"\r\n}\n", `{   "a": "x\ny"  }`},
		{"  {}  ", "{}"},
	} {
		got := string(oneLine([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzSSEReader: any byte stream parses without panicking or looping, and
// whatever JSON comes out of oneLine is one valid line.
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {\"a\":1}\n\n"))
	f.Add([]byte("event: endpoint\r\ndata: /m?s=1\r\n\r\n"))
	f.Add([]byte("retry: 10\n:c\ndata\ndata: [\n data: 1]\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newSSEReader(bytes.NewReader(b))
		for i := 0; i < len(b)+2; i++ {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if gjson.ValidBytes(ev.Data) {
				l := oneLine(ev.Data)
				if bytes.ContainsAny(l, "\r\n") || !gjson.ValidBytes(l) {
					t.Fatalf("oneLine(%q) = %q", ev.Data, l)
				}
			}
		}
		t.Fatalf("more events than bytes")
	})
}
