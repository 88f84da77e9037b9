package jsoncheck

import (
	"bytes"
	"strings"
	"testing"
)

// stream checks doc with a Stream, in parts of n bytes.
func stream(doc []byte, n int) error {
	var s Stream
	for b := doc; len(b) > 0; {
		k := min(n, len(b))
		s.Write(b[:k])
		b = b[k:]
	}
	return s.End()
}

// TestStreamAgreesWithValid: in parts of any size, a Stream accepts what
// Valid accepts and nothing else; numbers and literals included (issue
// 30: `[tru]`, `1.2.3` and `--1` passed the shim's follower).
func TestStreamAgreesWithValid(t *testing.T) {
	docs := []string{
		`{}`, `[]`, ` {"a" : [1, -2.5e+3, 0, 0.1, 1E9, true, false, null, {"b":"c\n\u00e9\\"}]} `,
		`"x"`, `0`, `-0`, `12`, `1.5`, `true`, `null`, "\t[ ]\r\n",
		`[tru]`, `1.2.3`, `--1`, `[1,]`, `{,}`, `{"a" 1}`, `{"a":1 2}`, `{"a":}`, `[01]`, `01`, `-`, `1.`,
		`1e`, `1e+`, `[1e5]`, `[.5]`, `[+1]`, `{"a":1}}`, `{"a":1}]`, `[1]x`, `""{}`, `{"a":"b`, `"\x"`,
		`"\u12g4"`, "\"a\x01\"", `[nul]`, `[falsy]`, `[true false]`, `{"a":1,}`, `{1:2}`, ``, ` `, `[`, `]`,
		strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	}
	for _, d := range docs {
		want := Valid([]byte(d)) == nil
		for _, n := range []int{1, 2, 3, 5, 7, 64, 1 << 20} {
			if got := stream([]byte(d), n) == nil; got != want {
				t.Errorf("parts of %d of %.60q: stream valid %v, Valid %v", n, d, got, want)
			}
		}
	}
}

// TestStreamMembers: a top-level object's members reach Member, with the
// start of each value, whole when it is all of it.
func TestStreamMembers(t *testing.T) {
	doc := `{"jsonrpc":"2.0","id":-12,"result":{"id":3},"e\u0072ror":[1],"n":1.5e3,"t":true,"long":"` + strings.Repeat("y", 300) + `"}`
	for _, n := range []int{1, 3, 64, 1 << 20} {
		var got []string
		s := Stream{Member: func(name, val []byte, whole bool) {
			w := "part"
			if whole {
				w = "whole"
			}
			got = append(got, string(name)+"="+string(val[:min(len(val), 8)])+" "+w)
		}}
		for b := []byte(doc); len(b) > 0; {
			k := min(n, len(b))
			s.Write(b[:k])
			b = b[k:]
		}
		if err := s.End(); err != nil {
			t.Fatal(err)
		}
		want := `"jsonrpc"="2.0" whole|"id"=-12 whole|"result"={ part|"e\u0072ror"=[ part|"n"=1.5e3 whole|"t"=true whole|"long"="yyyyyyy part`
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("parts of %d:\n got %s\nwant %s", n, g, want)
		}
	}
}

// FuzzStream: whatever the document and the cuts, a Stream and Valid
// agree.
func FuzzStream(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e+3,true,null,"x\u00e9"]}`, `[tru]`, `1.2.3`, `--1`, `""{}`, `"\\\"`} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(5))
	}
	f.Fuzz(func(t *testing.T, doc []byte, n uint8) {
		size := int(n%64) + 1
		want := Valid(doc) == nil
		if got := stream(doc, size) == nil; got != want {
			t.Fatalf("parts of %d of %q: stream valid %v, Valid %v", size, doc, got, want)
		}
		if !want {
			return
		}
		// The same document in one part, padded: still one value.
		if stream(append(bytes.Clone(doc), ' '), 1<<20) != nil {
			t.Fatalf("%q with a space after it", doc)
		}
	})
}

// TestCutEscape: how much of an escape a string's content still owes.
func TestCutEscape(t *testing.T) {
	for s, want := range map[string]int{
		`abc`: 0, `abc\`: -1, `abc\\`: 0, `abc\\\`: -1, `a\u`: 4, `a\u1`: 3, `a\u12`: 2, `a\u123`: 1,
		`a\u1234`: 0, `a\\u12`: 0, `a\\\u1`: 3, `u12`: 0, `\n`: 0,
	} {
		if got := CutEscape([]byte(s)); got != want {
			t.Errorf("CutEscape(%q) = %d, want %d", s, got, want)
		}
	}
}
