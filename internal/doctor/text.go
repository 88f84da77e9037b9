package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/text"
)

var marks = map[Severity]string{OK: "ok   ", Warn: "warn ", Error: "ERROR"}

// WriteText prints reports as `doctor` does: one block per server.
func WriteText(w io.Writer, reports []*Report) {
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		r.WriteText(w)
	}
}

// WriteText prints a heading, then one line per finding with its hint
// and detail indented below.
func (r *Report) WriteText(w io.Writer) {
	s := r.Server
	wrapped := "not wrapped"
	if s.Wrapped {
		wrapped = "wrapped"
	}
	what := s.URL
	if what == "" {
		what = strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
	}
	// Findings quote the server's stderr and errors, and a cloned
	// repository writes the command line: all of it goes through the one
	// quoting rule (text.Safe) before it reaches the terminal.
	q := text.Safe
	fmt.Fprintf(w, "%s  (%s scope, %s, %s)\n  %s\n", text.Name(s.Name), s.Scope, s.Transport, wrapped, q(what))
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %s %s\n", marks[f.Severity], q(f.Message))
		for _, d := range f.Detail {
			fmt.Fprintf(w, "          | %s\n", q(d))
		}
		if f.Hint != "" {
			fmt.Fprintf(w, "          hint: %s\n", q(f.Hint))
		}
	}
	for _, a := range r.Actions {
		fmt.Fprintf(w, "  done  %s\n", q(a))
	}
	if r.Next != "" {
		fmt.Fprintf(w, "  next  %s\n", q(r.Next))
	}
}

// WriteTodo prints what the user must still do after heal, server by
// server, or that nothing is left.
func WriteTodo(w io.Writer, reports []*Report) {
	var todo []string
	for _, r := range reports {
		if r.Next != "" && !r.Healed() {
			todo = append(todo, text.Safe(fmt.Sprintf("  %s: %s", text.Name(r.Server.Name), r.Next)))
		}
	}
	if len(todo) == 0 {
		fmt.Fprintln(w, "\nNothing left to do.")
		return
	}
	fmt.Fprintf(w, "\nStill to do:\n%s\n", strings.Join(todo, "\n"))
}
