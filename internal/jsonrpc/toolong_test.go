package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReaderMax: a line over the ceiling is discarded whole (whatever its
// length relative to the 64 KiB read buffer), reported with its length and
// head, and the lines around it come through intact.
func TestReaderMax(t *testing.T) {
	for _, n := range []int{100, 64 << 10, 200 << 10, 3 << 20} {
		long := `{"jsonrpc":"2.0","id":7,"result":"` + strings.Repeat("x", n) + `"}`
		in := "before\n" + long + "\r\nafter\n" + long // the last one without newline
		for _, max := range []int{50, 64 << 10, 1 << 20} {
			if max >= len(long) {
				continue
			}
			r := NewReaderMax(iotest.HalfReader(strings.NewReader(in)), max)
			got := func() ([]byte, error) { return r.Next() }
			if l, err := got(); err != nil || string(l) != "before" {
				t.Fatalf("n=%d max=%d: first line: got %q, %v", n, max, l, err)
			}
			for i, want := range []string{"after", ""} {
				_, err := got()
				var tl *TooLongError
				if !errors.As(err, &tl) {
					t.Fatalf("n=%d max=%d: got %v, want a TooLongError", n, max, err)
				}
				if tl.Len != int64(len(long)) || tl.Limit != max || !bytes.HasPrefix([]byte(long), tl.Head) || len(tl.Head) > headSize {
					t.Fatalf("n=%d max=%d: got Len %d Limit %d head %d bytes, want Len %d", n, max, tl.Len, tl.Limit, len(tl.Head), len(long))
				}
				if max >= 64 {
					if m := PeekHead(tl.Head); m.Kind != KindResponse || string(m.ID) != "7" {
						t.Fatalf("PeekHead: got %+v", m)
					}
				}
				l, err := got()
				if i == 1 {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("n=%d max=%d: at the end got %q, %v", n, max, l, err)
					}
					break
				}
				if err != nil || string(l) != want {
					t.Fatalf("n=%d max=%d: got %q, %v, want %q", n, max, l, err, want)
				}
			}
		}
	}
}

// TestReaderMaxExact: a line of exactly the ceiling passes, one byte more
// does not, with "\n" and "\r\n" endings.
func TestReaderMaxExact(t *testing.T) {
	for _, size := range []int{10, 100 << 10} {
		for _, eol := range []string{"\n", "\r\n"} {
			ok := strings.Repeat("a", size)
			r := NewReaderMax(strings.NewReader(ok+eol+ok+"b"+eol), size)
			if l, err := r.Next(); err != nil || len(l) != size {
				t.Errorf("size %d %q: a line at the ceiling: got %d bytes, %v", size, eol, len(l), err)
			}
			var tl *TooLongError
			if _, err := r.Next(); !errors.As(err, &tl) || tl.Len != int64(size+1) {
				t.Errorf("size %d %q: one byte over: got %v", size, eol, err)
			}
		}
	}
}

func TestPeekHead(t *testing.T) {
	tests := []struct {
		head string
		kind Kind
		id   string
	}{
		{`{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"xx`, KindResponse, "3"},
		{`{"jsonrpc":"2.0","id":"a\"b","error":{"code":1,"message":"xx`, KindResponse, `"a\"b"`},
		{`{"id":3,"jsonrpc":"2.0","method":"roots/list","params":{"x":"yy`, KindRequest, "3"},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"zz`, KindNotification, ""},
		{`{"jsonrpc":"2.0","result":{"x":"yy`, KindInvalid, ""},
		{`{"jsonrpc":"2.0","id":1.5,"result":{"x":"yy`, KindInvalid, ""},
		{`{"jsonrpc":"2.0","i`, KindInvalid, ""},
		{`xxxxxxxx`, KindInvalid, ""},
	}
	for _, tt := range tests {
		m := PeekHead([]byte(tt.head))
		if m.Kind != tt.kind || string(m.ID) != tt.id {
			t.Errorf("PeekHead(%s): got %v %s, want %v %s", tt.head, m.Kind, m.ID, tt.kind, tt.id)
		}
	}
}

// FuzzReaderMax checks that a Reader with a ceiling returns exactly the
// lines within it and a TooLongError with the right length for the others,
// however the input is cut into reads.
func FuzzReaderMax(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\r\n"), 3, 4)
	f.Add(bytes.Repeat([]byte("x"), 200<<10), 7, 70000)
	f.Add([]byte("ab\r\nabc\n\r\n"), 1, 2)
	f.Fuzz(func(t *testing.T, in []byte, chunk int, max int) {
		if max <= 0 || max > 1<<20 {
			return
		}
		r, want := cutReader(in, chunk)
		readAll(t, NewReaderMax(r, max), want, func(i int, got []byte, err error) {
			var tl *TooLongError
			if errors.As(err, &tl) {
				if len(want[i]) <= max || tl.Len != int64(len(want[i])) || !bytes.HasPrefix(want[i], tl.Head) {
					t.Fatalf("line %d (%d bytes, max %d): TooLongError %d bytes", i, len(want[i]), max, tl.Len)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want[i]) {
				t.Fatalf("line %d: got %q, want %q", i, got, want[i])
			}
		})
	})
}

// FuzzPeekHead: on any cut of a valid message, PeekHead never panics, and
// what it claims agrees with Peek on the whole message (it may say less:
// KindInvalid, or a notification whose id lies past the cut).
func FuzzPeekHead(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":"b"}}`,
		`{"jsonrpc":"2.0","id":"x\"y","error":{"code":1,"message":"m"}}`,
		`{"id":7,"jsonrpc":"2.0","method":"roots/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"n","params":[1,2]}`,
		`{"result":{},"id":3}`,
		` { "id" : -0 , "method" : "m" } `,
	} {
		f.Add([]byte(s), len(s)/2)
	}
	f.Fuzz(func(t *testing.T, line []byte, cut int) {
		if cut < 0 || cut > len(line) {
			return
		}
		head := PeekHead(line[:cut])
		m, err := Peek(line)
		if err != nil || head.Kind == KindInvalid {
			return
		}
		if bytes.Contains(line, []byte(`"method"`)) && (bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"error"`))) {
			return // both: Peek calls it a request, the head may not know
		}
		if bytes.Count(line, []byte(`"id"`)) > 1 || bytes.Count(line, []byte(`"method"`)) > 1 || bytes.Contains(line, []byte(`\u`)) {
			return // duplicate or escaped keys: the first one found wins in both, but escapes may hide one
		}
		switch {
		case head.Kind == KindNotification && m.Kind == KindRequest:
		case head.Kind != m.Kind || !bytes.Equal(head.ID, m.ID) || head.Method != m.Method:
			t.Fatalf("PeekHead(%q) = %v %s %q; Peek(%q) = %v %s %q", line[:cut], head.Kind, head.ID, head.Method, line, m.Kind, m.ID, m.Method)
		}
	})
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReaderMemory: reading a line allocates about the line once more
// than it holds, and a line over the ceiling no more than the ceiling
// (issue 16: a buffer grown by doubling held the old and the new copy and
// the garbage of the smaller ones: 650 MiB for a 256 MiB ceiling). Bytes
// allocated, not timing or RSS: deterministic.
func TestReaderMemory(t *testing.T) {
	const ceiling = 16 << 20
	over := strings.Repeat("x", 64<<20) + "\n"
	within := strings.Repeat("y", ceiling-1) + "\n"
	for _, tc := range []struct {
		name string
		in   string
		max  uint64 // bytes the read may allocate
	}{
		{"64 MiB line, 16 MiB ceiling", over, ceiling + 4<<20 + 1<<20},
		{"16 MiB line within the ceiling", within, 2*ceiling + 4<<20 + 1<<20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReaderMax(strings.NewReader(tc.in), ceiling)
			var line []byte
			var err error
			got := allocated(func() { line, err = r.NextOwned() })
			if tc.in == over {
				var tl *TooLongError
				if !errors.As(err, &tl) || tl.Len != int64(len(over)-1) {
					t.Fatalf("got %v, want a TooLongError for %d bytes", err, len(over)-1)
				}
			} else if err != nil || len(line) != len(tc.in)-1 {
				t.Fatalf("got %d bytes, %v; want the line", len(line), err)
			}
			if got > tc.max {
				t.Errorf("reading allocated %d MiB, want at most %d MiB", got>>20, tc.max>>20)
			}
		})
	}
}

// TestChunks: what is written comes back whole, in order, whatever the
// write sizes, through Write and through Spare/Commit.
func TestChunks(t *testing.T) {
	var want bytes.Buffer
	var c Chunks
	for i, n := range []int{0, 1, 100, 64 << 10, 3 << 20, 5 << 20, 7} {
		p := bytes.Repeat([]byte{byte('a' + i)}, n)
		want.Write(p)
		if i%2 == 0 {
			c.Write(p)
			continue
		}
		for len(p) > 0 {
			k := copy(c.Spare(1), p)
			c.Commit(k)
			p = p[k:]
		}
	}
	if c.Len() != want.Len() || !bytes.Equal(c.Head(200), want.Bytes()[:200]) {
		t.Fatalf("Len %d, want %d; or the head differs", c.Len(), want.Len())
	}
	if got := c.AppendTo([]byte("<")); !bytes.Equal(got[1:], want.Bytes()) || got[0] != '<' || c.Len() != 0 {
		t.Fatalf("AppendTo: %d bytes, want %d after the prefix, and Chunks empty after", len(got), want.Len())
	}
}
