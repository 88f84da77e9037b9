package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 5, "abcde…"},
		{"ab€cd", 3, "ab…"},  // € is 3 bytes: not split
		{"ab€cd", 5, "ab€…"}, // cut right after it
		{"", 0, ""},
	} {
		if got := Clip(tt.s, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if got := ClipBytes([]byte(tt.s), tt.n); got != tt.want {
			t.Errorf("ClipBytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
	// Whatever the cut, the result is valid UTF-8 when the input is.
	s := strings.Repeat("日本語🙂", 50)
	for n := 0; n < len(s); n++ {
		if got := Clip(s, n); !utf8.ValidString(got) || len(got) > n+len("…") {
			t.Fatalf("Clip(_, %d) = %q: invalid or too long", n, got)
		}
	}
}
