package jsoncheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// nested is depth arrays around inner: [[[...inner...]]].
func nested(depth int, open, inner, close string) []byte {
	var b bytes.Buffer
	b.Grow(depth*(len(open)+len(close)) + len(inner))
	for range depth {
		b.WriteString(open)
	}
	b.WriteString(inner)
	for range depth {
		b.WriteString(close)
	}
	return b.Bytes()
}

var seeds = []string{
	`{"a":[1,2.5e-3,-0,true,false,null,"x\u00e9\n"]}`, `{"a":}`, `[1,]`, `01`, `1.`, `"\x"`,
	`"abcdefghijklmnop\"qrstuvwxyz"`, "\"tab\there\"", `  {} `, `{"a":1}{}`, `-`, `"\ud83d"`,
	``, ` `, `[`, `]`, `{`, `}`, `{"a"}`, `{"a":1,}`, `{,}`, `[,1]`, `[1 2]`, `{"a" 1}`, `{1:2}`,
	`tru`, `nul`, `falsey`, `1e`, `1e+`, `-01`, `0.0e-0`, `1E9`, `"\u12"`, `"\u12g4"`, `"\/"`,
	"\"\x7f\"", "\"\xff\"", "\"\x1f\"", `[[[]]]`, `[{}]`, `{"":{"":[]}}`, "\t\n\r[ ]\r\n", `"`, `"\`,
	`[1]x`, `{"a":1} `, `123abc`, `-a`, `.5`, `+1`,
	// Strings longer than the eight bytes skipPlain takes at once, a quote,
	// backslash or control character inside such a word.
	`"abcdefghijklmnopqrstuvwxyz0123456789"`, `"abcdefg\"hijklmnop"`, `"abcdefgh\\ijklmnop"`,
	"\"abcdefghijklmn\x01op\"", "\"abcdefghijklmno\x1f\"", "\"abcdefghijklmnop\x7f\x80\xff\"", `"abcdefghijklmnop`,
}

// TestAgreesWithEncodingJSON: Valid and json.Valid agree on the seeds, on
// documents at the depth limit and just past it.
func TestAgreesWithEncodingJSON(t *testing.T) {
	cases := append([]string(nil), seeds...)
	for _, d := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1} {
		cases = append(cases, string(nested(d, "[", "", "]")), string(nested(d, `{"k":`, "1", "}")),
			string(nested(d, "[", "", "]"))+" ", string(nested(d, "[", "", "]")[1:]))
	}
	for _, s := range cases {
		got, want := Valid([]byte(s)) == nil, json.Valid([]byte(s))
		if got != want {
			t.Errorf("Valid(%.60q…) = %v (%v), encoding/json says %v", s, got, Valid([]byte(s)), want)
		}
	}
}

// TestRecordedPayloadsValid: every recorded Claude Code hook payload is
// valid, and the repository's JSON test data is judged as encoding/json
// judges it.
func TestRecordedPayloadsValid(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/claude-code-2.1.328/hooks/*.json")
	if len(files) == 0 {
		t.Fatal("no recorded hook payloads under testdata/claude-code-2.1.328/hooks")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Valid(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestTooDeep: a document nested past MaxDepth is refused with ErrTooDeep
// at the bracket that went too deep, 10 million levels too, with no more
// than a few KiB of stack growth and a few MiB of heap.
func TestTooDeep(t *testing.T) {
	b := nested(10_000_000, "[", "", "]")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := Valid(b)
	runtime.ReadMemStats(&after)
	var se *SyntaxError
	if !errors.Is(err, ErrTooDeep) || !errors.As(err, &se) || se.Offset != MaxDepth {
		t.Fatalf("10M nested arrays: %v, want ErrTooDeep at offset %d", err, MaxDepth)
	}
	if grew := after.StackInuse - before.StackInuse; after.StackInuse > before.StackInuse && grew > 1<<20 {
		t.Errorf("the stack grew by %d bytes", grew)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("Valid allocated %d bytes", alloc)
	}
	if !strings.Contains(err.Error(), "nested deeper than 10000 levels") {
		t.Errorf("error %q does not say why", err)
	}
}

// TestOffsets: the offset names the first byte that makes the document
// invalid (what claudecfg turns into a line and column).
func TestOffsets(t *testing.T) {
	for s, want := range map[string]int{`{"a":}`: 5, `[1,]`: 3, `[1 2]`: 3, `{"a":1`: 6, `"ab`: 3, `[1]x`: 3, `{"a" 1}`: 5} {
		var se *SyntaxError
		if err := Valid([]byte(s)); !errors.As(err, &se) || se.Offset != want {
			t.Errorf("Valid(%q) = %v, want offset %d", s, err, want)
		}
	}
}

// FuzzValid: Valid agrees with json.Valid on every input (which refuses
// past the same depth), and whatever it accepts gjson parses.
func FuzzValid(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// The limit itself is tested above (TestAgreesWithEncodingJSON):
	// 20 KiB seeds slow the fuzzer's mutations to a crawl.
	f.Add(nested(50, `{"a":[`, `"x"`, `]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Valid(b)
		if got, want := err == nil, json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, err, want)
		}
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Offset < 0 || se.Offset > len(b)) {
			t.Fatalf("Valid(%q) = %v: no offset within the input", b, err)
		}
		if err == nil && !gjson.ValidBytes(b) && bytes.IndexFunc(b, func(r rune) bool { return r == 0xFFFD }) < 0 {
			// gjson checks UTF-8 (encoding/json does not); otherwise they agree.
			t.Fatalf("Valid accepts %q, gjson does not", b)
		}
	})
}

// BenchmarkValid validates a recorded PreToolUse payload 100000 times
// with Valid, gjson.ValidBytes (what the hooks and claudecfg used) and
// json.Valid, and a 64 KiB tool result 1000 times with Valid and gjson,
// side by side, and reports the ratios (run with -benchtime 1x).
func BenchmarkValid(b *testing.B) {
	payload, err := os.ReadFile("../../testdata/claude-code-2.1.328/hooks/PreToolUse.mcp.json")
	if err != nil {
		b.Fatal(err)
	}
	// And a tool result of 64 KiB of text, the bulk of what a remote
	// server's answers hold (the bridge validates each).
	result := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` +
		strings.Repeat(`lorem ipsum \"dolor\" sit amet\n`, 2048) + `"}]}}`)
	const n = 100000
	timeOf := func(doc []byte, times int, valid func([]byte) bool) time.Duration {
		start := time.Now()
		for range times {
			if !valid(doc) {
				b.Fatal("invalid")
			}
		}
		return time.Since(start)
	}
	own := func(p []byte) bool { return Valid(p) == nil }
	for range b.N {
		o, g, e := timeOf(payload, n, own), timeOf(payload, n, gjson.ValidBytes), timeOf(payload, n, json.Valid)
		b.ReportMetric(float64(o.Nanoseconds())/n, "jsoncheck-ns/payload")
		b.ReportMetric(float64(o)/float64(g), "payload-x-gjson")
		b.ReportMetric(float64(o)/float64(e), "payload-x-encoding/json")
		o, g = timeOf(result, n/100, own), timeOf(result, n/100, gjson.ValidBytes)
		b.ReportMetric(float64(o)/float64(g), "64KiB-x-gjson")
	}
}

// TestValueEndDepth: a value inside depth containers is held to what is
// left of MaxDepth, so a scanner that opens the outer object itself (the
// JSON-RPC routing path) and the whole-document check draw the line at
// the same nesting, the one encoding/json draws.
func TestValueEndDepth(t *testing.T) {
	for _, d := range []int{MaxDepth - 1, MaxDepth} {
		member := nested(d, "[", "", "]")
		doc := append(append([]byte(`{"params":`), member...), '}')
		end, err := ValueEnd(doc, len(`{"params":`), 1)
		if got, want := err == nil, json.Valid(doc); got != want || Valid(doc) == nil != want {
			t.Errorf("depth %d: ValueEnd = %v, Valid = %v, encoding/json says %v", d+1, err, Valid(doc), want)
		}
		if err == nil && end != len(doc)-1 {
			t.Errorf("depth %d: ValueEnd ended at %d, want %d", d+1, end, len(doc)-1)
		}
		if err != nil && !errors.Is(err, ErrTooDeep) {
			t.Errorf("depth %d: %v, want ErrTooDeep", d+1, err)
		}
	}
}

// TestStringScanLinear: the string scan examines each byte a bounded
// number of times whatever the escapes (issue 17), counted, not timed.
func TestStringScanLinear(t *testing.T) {
	for name, unit := range map[string]string{
		"plain": "x", "100-byte lines": strings.Repeat("y", 98) + `\n`,
		"40-byte runs": strings.Repeat("w", 40) + `\"`, "escape-dense": `\"\\\n\t\u00e9/`,
	} {
		doc := []byte(`"` + strings.Repeat(unit, (4<<20)/len(unit)) + `"`)
		var err error
		n := CountScanned(func() { err = Valid(doc) })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n > 2*int64(len(doc)) {
			t.Errorf("%s: the scan examined %d bytes of %d (%.1fx), want at most 2x", name, n, len(doc), float64(n)/float64(len(doc)))
		}
		if name == "plain" && n < int64(len(doc))-2 {
			t.Errorf("%s: counted %d bytes of %d: the counter misses the scan", name, n, len(doc))
		}
	}
}

// TestNoAllocation: validating a valid document allocates nothing (the
// routing path validates every message; the stack of containers lives in
// the validator's frame).
func TestNoAllocation(t *testing.T) {
	payload, err := os.ReadFile("../../testdata/claude-code-2.1.328/hooks/PreToolUse.mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Valid(payload) }); n != 0 {
		t.Errorf("Valid allocated %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ValueEnd([]byte(`{"a":[1,{"b":"c"}]}`), 0, 1) }); n != 0 {
		t.Errorf("ValueEnd allocated %v times per call", n)
	}
}
