package redact

import (
	"strings"
	"testing"
)

// benchInputs are 1 MiB texts like large tool results: plain, full of
// keywords, of escaped JSON with secrets, of URLs, of backslashes.
var benchInputs = map[string]string{
	"plain":        strings.Repeat("lorem ipsum dolor sit amet ", 1<<20/27),
	"keywords":     strings.Repeat("token ", 1<<20/6),
	"escaped-json": strings.Repeat(`{\"api_key\":\"abcdefgh\"}`, 1<<20/26),
	"urls":         strings.Repeat("https://x.example/a?b=c ", 1<<20/24),
	"backslashes":  strings.Repeat(`\\\\\\\\\\`, 1<<20/10),
}

// BenchmarkString compares the scanners with the regular expressions they
// replace (reference_test.go), side by side on the same inputs.
func BenchmarkString(b *testing.B) {
	for name, in := range benchInputs {
		b.Run(name+"/scanners", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				String(in)
			}
		})
		b.Run(name+"/regexps", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				reference(in)
			}
		})
	}
}
