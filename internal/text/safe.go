package text

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Safe is the one quoting rule for text that came from a server (its
// stderr, its exit reason, its error text, a remote's status line) before
// mcp-heal shows it on a terminal or hands it to the model: every control
// character (C0 and DEL, C1), every Unicode bidirectional control and
// every invalid UTF-8 byte becomes a visible Go-style escape (\x1b,
// \u202e). A server's stderr can hold terminal escapes: OSC 52 writes the
// user's clipboard, OSC 0 retitles the window, ESC[2J clears the screen;
// bidi controls reorder what a reader sees. Printable text, backslashes
// included, is kept as it is, so ordinary messages and paths read as
// before.
func Safe(s string) string {
	i := unsafeAt(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// SafeAll is Safe of every line.
func SafeAll(lines []string) []string {
	if lines == nil {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = Safe(l)
	}
	return out
}

// unsafeAt is the index of the first byte Safe must change, or -1: most
// text needs no copy.
func unsafeAt(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c)) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		// Arabic letter mark, LRM/RLM, line and paragraph separators,
		// embeddings and overrides, isolates.
		return true
	}
	return false
}
