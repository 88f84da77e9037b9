package proc

import (
	"bytes"
	"strings"
	"testing"
)

// TestLineWriterMarks: a kept server's guardian hears of every moment a line is left
// unfinished in the pipe, however the buffered writer cuts the messages:
// a full buffer written mid-message, a message larger than the buffer
// written without its newline, then the newline alone. Whole short lines
// (atomic writes) cost no mark.
func TestLineWriterMarks(t *testing.T) {
	var pipe bytes.Buffer
	var events []string // "open", "done", or the bytes of a write
	l := &lineWriter{w: writerFunc(func(p []byte) (int, error) {
		events = append(events, string(p))
		return pipe.Write(p)
	}), mark: func(open bool) {
		events = append(events, map[bool]string{true: "open", false: "done"}[open])
	}}
	for _, chunk := range []string{
		`{"a":1}` + "\n",                   // whole, short: atomic
		`{"b":` + strings.Repeat("x", 600), // starts a line, does not end it
		`2}` + "\n" + `{"c":`,              // ends it, starts another
		`3}` + "\n",                        // ends that one
		strings.Repeat("y", 5000),          // large, no newline
		"\n",                               // the newline alone
		`{"d":` + strings.Repeat("z", 700) + "\n", // whole but not atomic
		`{"e":2}` + "\n", // whole, short again
	} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	// A write that may leave a line unfinished in the pipe (it starts
	// inside a line, does not end one, or is not atomic) must come after
	// an "open" the guardian has not been told is "done".
	open, lineStart, n := false, true, 0
	for _, e := range events {
		switch e {
		case "open":
			open = true
			n++
		case "done":
			if !lineStart {
				t.Fatalf("done sent with a line unfinished (events %q)", events)
			}
			open = false
			n++
		default:
			atomicWhole := lineStart && strings.HasSuffix(e, "\n") && len(e) <= atomicPipeWrite
			if !atomicWhole && !open {
				t.Fatalf("a write of %d bytes that may leave a line unfinished went unmarked", len(e))
			}
			lineStart = strings.HasSuffix(e, "\n")
		}
	}
	if open || n != 6 {
		t.Fatalf("%d marks, open at the end: %v; want three open..done pairs (the split messages, the large one, the long one)", n, open)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
