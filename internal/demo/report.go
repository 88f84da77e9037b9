package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as a short table and a few lines of
// explanation.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "mcp-heal demo: the example MCP server killed three ways in the middle of a burst\n")
	fmt.Fprintf(w, "(%d calls per failure from %d concurrent clients; the same script run through the shim and directly)\n\n",
		r.CallsPerPhase, r.Workers)
	const row = "%-30s %4v %6v %4v %7v %9v  │ %4v %6v %4v %9v\n"
	fmt.Fprintf(w, "%-30s %-35s │ %s\n", "", "────── through mcp-heal shim ──────", "────── connected directly ──────")
	fmt.Fprintf(w, row, "failure", "ok", "failed", "lost", "retried", "recovered", "ok", "failed", "lost", "recovered")
	for _, p := range r.Phases {
		fmt.Fprintf(w, row, p.Failure,
			p.Shim.OK, p.Shim.Failed, p.Shim.Lost, p.Shim.Retried, recovery(p.Shim.RecoveryMS),
			p.Direct.OK, p.Direct.Failed, p.Direct.Lost, recovery(p.Direct.RecoveryMS))
	}
	fmt.Fprintf(w, row, "total", r.Shim.OK, r.Shim.Failed, r.Shim.Lost, r.Shim.Retried, "",
		r.Direct.OK, r.Direct.Failed, r.Direct.Lost, "")
	fmt.Fprintln(w)

	// What happened, in words.
	for _, p := range r.Phases {
		s := p.Shim
		line := fmt.Sprintf("- %s: ", p.Failure)
		if s.NewPID > 0 && s.OldPID > 0 {
			line += fmt.Sprintf("server pid %d replaced by %d, ", s.OldPID, s.NewPID)
		}
		if s.RecoveryMS >= 0 {
			line += fmt.Sprintf("first answer %s after the failure", recovery(s.RecoveryMS))
		} else {
			line += "never answered again"
		}
		if s.SessionReplayed {
			line += "; log level and subscription replayed"
		}
		fmt.Fprintln(w, line)
		for _, e := range sortedErrors(s.Errors) {
			fmt.Fprintf(w, "    %d× %s\n", e.n, e.msg)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Through the shim: %d of %d calls answered, %d failed with an error, %d lost; %d re-sent to the new server; non-idempotent calls run twice: %d.\n",
		r.Shim.OK, r.Shim.Calls, r.Shim.Failed, r.Shim.Lost, r.Shim.Retried, r.Shim.RanTwice)
	if r.Shim.Failed > 0 && onlyNonIdempotent(r) {
		fmt.Fprintf(w, "  (a failed call is a non-idempotent call that was running when the server died: the shim does not retry it and says it may or may not have taken effect)\n")
	}
	fmt.Fprintf(w, "Connected directly: %d of %d calls answered, %d failed, %d lost", r.Direct.OK, r.Direct.Calls, r.Direct.Failed, r.Direct.Lost)
	if len(r.Phases) > 0 && r.Phases[0].Direct.RecoveryMS < 0 {
		fmt.Fprintf(w, ": after the first SIGKILL the connection was gone and every later call failed")
	}
	fmt.Fprintf(w, ".\n(%s in all)\n", (time.Duration(r.DurationMS) * time.Millisecond).Round(100*time.Millisecond))
	return nil
}

func recovery(ms int64) string {
	if ms < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2fs", float64(ms)/1000)
}

type errCount struct {
	msg string
	n   int
}

func sortedErrors(m map[string]int) []errCount {
	var out []errCount
	for k, v := range m {
		out = append(out, errCount{strings.TrimSpace(k), v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].msg < out[j].msg
	})
	return out
}

// onlyNonIdempotent reports whether every error the shim's client got was
// for counter_increment, the demo's one non-idempotent tool.
func onlyNonIdempotent(r *Report) bool {
	for _, p := range r.Phases {
		for msg := range p.Shim.Errors {
			if !strings.HasPrefix(msg, "counter_increment: ") {
				return false
			}
		}
	}
	return true
}
