package bridge

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

func TestSSEReader(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	in := ": keep-alive\n\n" +
		"id: 1\nretry: 2500\ndata:\n\n" + // SEP-1699 priming event
		"event: endpoint\ndata: /message?sessionId=abc\n\n" +
		"id: 2\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" +
		"data:{\"big\":\"" + big + "\"}\n\n" +
		"id\ndata: x\n\n" + // id with no value resets it
		"retry: 4294967295\ndata: y\n\n" + // 49 days: capped
		"data: cut off at the end"
	r := newSSEReader(strings.NewReader(in), jsonrpc.DefaultMaxMessage)
	want := []event{
		{ID: "1", HasID: true, Retry: 2500 * time.Millisecond, Data: []byte{}},
		{Name: "endpoint", Data: []byte("/message?sessionId=abc")},
		{ID: "2", HasID: true, Data: []byte("{\"a\":\n1}")},
		{Data: []byte(`{"big":"` + big + `"}`)},
		{ID: "", HasID: true, Data: []byte("x")},
		{Retry: maxRetry, Data: []byte("y")},
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
		r := newSSEReader(bytes.NewReader(b), jsonrpc.DefaultMaxMessage)
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

// FuzzSSEReaderMax: with a small ceiling, no event's data is ever over it,
// and the events within it are the ones an unlimited reader returns.
func FuzzSSEReaderMax(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {\"a\":1}\n\n"), 4)
	f.Add([]byte("data: 12345\ndata: 678\n\ndata: 1\n\n"), 6)
	f.Add([]byte(": "+strings.Repeat("c", 5000)+"\nevent: "+strings.Repeat("e", 5000)+"\ndata: x\n\n"), 10)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max <= 0 || max > 1<<16 {
			return
		}
		all := newSSEReader(bytes.NewReader(b), jsonrpc.DefaultMaxMessage)
		r := newSSEReader(bytes.NewReader(b), max)
		for i := 0; i < len(b)+2; i++ {
			ev, err := r.Next()
			want, werr := all.Next()
			if (err == nil) != (werr == nil) {
				t.Fatalf("ceiling %d: got %v, unlimited got %v", max, err, werr)
			}
			if err != nil {
				return
			}
			if len(ev.Data) > max {
				t.Fatalf("ceiling %d: got %d bytes of data", max, len(ev.Data))
			}
			if ev.Dropped == nil && !bytes.Equal(ev.Data, want.Data) {
				t.Fatalf("ceiling %d: got %q, want %q", max, ev.Data, want.Data)
			}
			if ev.Dropped != nil && len(want.Data) <= max {
				t.Fatalf("ceiling %d: dropped %q", max, want.Data)
			}
		}
		t.Fatalf("more events than bytes")
	})
}
