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
