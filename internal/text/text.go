// Package text holds the one way mcp-heal shortens what it quotes (a
// server's line, an error, a status detail) for logs, errors and replies.
package text

import (
	"strings"
	"unicode/utf8"
)

// Clip returns s cut to at most n bytes, then "…" when it was cut. The cut
// never splits a UTF-8 sequence, so what is quoted stays valid text, and
// never leaves a server's words (Quote) open: a cut inside «…» closes it,
// "…»", so what follows the cut is never read as inside the quote, nor
// the quote's words as outside it.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:runeStart(s, n)]
	if strings.LastIndex(s, "«") > strings.LastIndex(s, "»") {
		return s + "…»"
	}
	return s + "…"
}

// ClipBytes is Clip of b, without copying more of b than it keeps.
func ClipBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return Clip(string(b[:n+1]), n)
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in
// (at most 3 bytes: a sequence is 4 bytes at most).
func runeStart(s string, i int) int {
	for j := 0; j < utf8.UTFMax-1 && i > 0 && !utf8.RuneStart(s[i]); j++ {
		i--
	}
	return i
}
