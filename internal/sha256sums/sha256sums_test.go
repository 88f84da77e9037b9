package sha256sums

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/sha256sums/sumstest"
)

func TestLookup(t *testing.T) {
	b := sha256.Sum256([]byte("the binary"))
	sum, name := hex.EncodeToString(b[:]), "mcp-heal-linux-amd64"
	for _, c := range sumstest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			got := Lookup([]byte(c.Expand(sum, name)), name)
			if (got == sum) != c.Runs {
				t.Errorf("Lookup(%q) = %q, runs %v, want runs %v", c.Expand(sum, name), got, got == sum, c.Runs)
			}
		})
	}
}

// TestFormatParses: what the writer writes the reader reads back.
func TestFormatParses(t *testing.T) {
	sums := map[string]string{"b": sumstest.Other, "a": "ABCDEF" + sumstest.Other[6:]}
	f := Format(sums)
	if want := "abcdef" + sumstest.Other[6:] + "  a\n" + sumstest.Other + "  b\n"; string(f) != want {
		t.Errorf("Format: got %q, want %q", f, want)
	}
	got := Parse(f)
	if len(got) != 2 || got["a"] != "abcdef"+sumstest.Other[6:] || got["b"] != sumstest.Other {
		t.Errorf("Parse(Format(x)) = %v", got)
	}
}
