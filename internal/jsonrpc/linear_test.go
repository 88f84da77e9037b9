package jsonrpc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
)

// bigAnswer is a tools/call response whose one text is n bytes of the
// given shape, as servers send file contents, page snapshots and logs.
func bigAnswer(shape string, n int) []byte {
	var unit string
	switch shape {
	case "one line":
		unit = "x"
	case "100-byte lines":
		unit = strings.Repeat("y", 98) + `\n` // 100 bytes, one escape
	case "escape-dense":
		unit = `\"\\\n\t\u00e9/` // nothing but escapes
	}
	text := strings.Repeat(unit, n/len(unit)) // whole units: no escape cut in two
	return []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
}

// TestScanLinear: the string scan examines each byte a bounded number of
// times, whatever the escapes (issue 17: the scan searched from every
// escape to the end of the string, escapes x length). Counting the bytes
// the searches examine keeps the test deterministic on a loaded machine.
func TestScanLinear(t *testing.T) {
	for _, shape := range []string{"one line", "100-byte lines", "escape-dense"} {
		for _, mib := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s %d MiB", shape, mib), func(t *testing.T) {
				msg := bigAnswer(shape, mib<<20)
				var m Msg
				var err error
				n := jsoncheck.CountScanned(func() { m, err = Peek(msg) })
				if err != nil || m.Kind != KindResponse || string(m.ID) != "7" {
					t.Fatalf("Peek: got %+v, %v; want the response to 7", m, err)
				}
				if n > 2*int64(len(msg)) {
					t.Errorf("searches examined %d bytes of a %d-byte message (%.0fx), want at most 2x", n, len(msg), float64(n)/float64(len(msg)))
				}
			})
		}
	}
}

// The same shapes through PeekHead and the validator alone, which share
// the string scan, and a quote escaped at every other byte.
func TestScanLinearOtherEntries(t *testing.T) {
	dense := []byte(`"` + strings.Repeat(`\"`, 1<<19) + `"`)
	for name, f := range map[string]func() bool{
		"validJSON": func() bool { return validJSON(dense) },
		"PeekHead":  func() bool { return PeekHead(bigAnswer("100-byte lines", 1<<20)).Kind == KindResponse },
	} {
		var ok bool
		n := jsoncheck.CountScanned(func() { ok = f() })
		if !ok {
			t.Errorf("%s: rejected a valid message", name)
		}
		if n > 2<<20 {
			t.Errorf("%s: searches examined %d bytes of about 1 MiB, want at most 2 MiB", name, n)
		}
	}
}
