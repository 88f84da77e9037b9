// Package sha256sums is the one reader and writer of a release's
// bin/SHA256SUMS, the file both plugin launchers check the bundled binary
// against before running it. The release writes it in sha256sum's format
// (the hash in lower-case hex, two spaces, the name); a reader takes what
// sha256sum, shasum and a hand edit produce: upper-case hex, binary mode's
// '*', CRLF line ends, a last line without its newline.
//
// The sh launcher (plugin/mcp-heal, want_sum) reads it with builtins and
// cannot import this; plugin/sums_test.go and plugin/winlauncher's tests
// run both launchers on sumstest.Cases, the table this package is tested
// on, so that the three readers cannot drift again (issue 26: the Windows
// launcher lower-cased the hash and the sh one did not).
package sha256sums

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sort"
	"strings"
)

// Sum is the SHA-256 of the file at path in the file's form: lower-case
// hex.
func Sum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Format is the file listing sums (name to lower-case hex SHA-256), one
// line each, sorted by name.
func Format(sums map[string]string) []byte {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(strings.ToLower(sums[n]) + "  " + n + "\n")
	}
	return []byte(b.String())
}

// Parse returns the names the file lists with their SHA-256 in
// lower-case hex. A line that is not a 64-digit hex hash, a space, and a
// name (after a second space or a '*') is skipped; a name listed twice
// with different hashes is left out, so that it never matches.
func Parse(file []byte) map[string]string {
	out := map[string]string{}
	bad := map[string]bool{}
	for line := range strings.SplitSeq(string(file), "\n") {
		line = strings.TrimSuffix(line, "\r")
		h, n, ok := strings.Cut(line, " ")
		if !ok || !isHex64(h) {
			continue
		}
		n = strings.TrimPrefix(n, " ")
		n = strings.TrimPrefix(n, "*")
		if n == "" {
			continue
		}
		h = strings.ToLower(h)
		if prev, seen := out[n]; seen && prev != h {
			bad[n] = true
		}
		out[n] = h
	}
	for n := range bad {
		delete(out, n)
	}
	return out
}

// Lookup is the SHA-256 the file gives name, lower-case, or "" when it
// does not list it (or lists it ambiguously).
func Lookup(file []byte, name string) string { return Parse(file)[name] }

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
