package jsonrpc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var microMsg = []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("z", 4016) + `"}}`)

func BenchmarkValidJSON4K(b *testing.B) {
	b.SetBytes(int64(len(microMsg)))
	for b.Loop() {
		validJSON(microMsg)
	}
}

func BenchmarkUTF8Valid4K(b *testing.B) {
	b.SetBytes(int64(len(microMsg)))
	for b.Loop() {
		utf8.Valid(microMsg)
	}
}

func BenchmarkPeek4K(b *testing.B) {
	b.SetBytes(int64(len(microMsg)))
	for b.Loop() {
		Peek(microMsg)
	}
}

// BenchmarkPeekShapes: a 1 MiB tool result of each shape TestScanLinear
// uses, the long-run and the escape-dense sides of the string scan.
func BenchmarkPeekShapes(b *testing.B) {
	for _, shape := range []string{"one line", "100-byte lines", "escape-dense"} {
		msg := bigAnswer(shape, 1<<20)
		b.Run(strings.ReplaceAll(shape, " ", "-"), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if _, err := Peek(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
