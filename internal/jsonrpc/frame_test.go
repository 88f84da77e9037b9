package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestReaderLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"empty lines kept", "\n\na\n", []string{"", "", "a"}},
		{"empty input", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in))
			var got []string
			for {
				line, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReaderCut: Cut tells a last line that ended with the input from one
// that ended with its line end, short or longer than the read buffer (a
// server killed in the middle of an answer: proc drops such a line).
func TestReaderCut(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, tt := range []struct {
		name string
		in   string
		cuts []bool
	}{
		{"ended", "a\nb\n", []bool{false, false}},
		{"short, cut", "a\nb", []bool{false, true}},
		{"long, ended", long + "\n", []bool{false}},
		{"long, cut", "a\n" + long, []bool{false, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReaderMax(strings.NewReader(tt.in), 1<<20)
			var cuts []bool
			for {
				if _, err := r.Next(); err != nil {
					break
				}
				cuts = append(cuts, r.Cut())
			}
			if fmt.Sprint(cuts) != fmt.Sprint(tt.cuts) {
				t.Errorf("Cut after each line: %v, want %v", cuts, tt.cuts)
			}
		})
	}
}

// TestReaderHugeLine checks there is no 64 KiB (or any) cap: a 64 MiB line
// comes back intact, and the next line after it too.
func TestReaderHugeLine(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 64<<20)
	in := append(append(append([]byte{}, big...), '\n'), []byte("next\n")...)
	r := NewReader(bytes.NewReader(in))
	line, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(line, big) {
		t.Fatalf("got %d bytes, want %d", len(line), len(big))
	}
	line, err = r.Next()
	if err != nil || string(line) != "next" {
		t.Fatalf("got %q, %v; want next", line, err)
	}
}

func TestWriterAddsNewline(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteLine([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "{\"a\":1}\n" {
		t.Errorf("got %q", got)
	}
}
