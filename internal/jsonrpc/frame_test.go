package jsonrpc

import (
	"bytes"
	"errors"
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
