package jsonrpc

import (
	"bytes"
	"testing"
)

// benchReader reads in (n lines) once per iteration through Next.
func benchReader(b *testing.B, line []byte, n int) {
	in := bytes.Repeat(append(line, '\n'), n)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(in))
		for range n {
			if _, err := r.Next(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// The shim's hot path: 4 KiB messages, well within the read buffer.
func BenchmarkReader4K(b *testing.B) { benchReader(b, bytes.Repeat([]byte("x"), 4<<10), 256) }

// A long line: assembled from many buffer-sized chunks.
func BenchmarkReader8MiB(b *testing.B) { benchReader(b, bytes.Repeat([]byte("x"), 8<<20), 1) }
