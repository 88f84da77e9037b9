package jsonrpc

import (
	"strings"
	"testing"
)

// BenchmarkFollower follows a 16 MiB tool result in 64 KiB parts, as the
// shim passes a long answer on: one long string, and a result of many
// small members (numbers, literals) read byte by byte.
func BenchmarkFollower(b *testing.B) {
	text := strings.Repeat(`line of a file\n`, 1<<20)
	items := strings.Repeat(`{"n":12345,"ok":true,"x":null},`, 1<<19)
	for name, msg := range map[string]string{
		"text":  `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`,
		"items": `{"jsonrpc":"2.0","id":7,"result":{"items":[` + items + `0]}}`,
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				var f Follower
				for p := msg; len(p) > 0; {
					k := min(64<<10, len(p))
					f.Write([]byte(p[:k]))
					p = p[k:]
				}
				if _, err := f.End(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
