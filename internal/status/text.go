package status

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// WriteText prints the report as `status` does: a table of servers, the
// notes about them, then recent incidents. Errors are not printed.
func (rep Report) WriteText(w io.Writer, home string, now time.Time, a health.Audience) {
	if len(rep.Servers) == 0 {
		fmt.Fprintf(w, "No MCP servers configured for %s.\n", rep.Project)
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tSCOPE\tTRANSPORT\tWRAPPED\tHEALTH\tCHILD\tUPTIME\tRESTARTS\tLAST EXIT\tTARGET")
		for _, s := range rep.Servers {
			child, up, restarts, exit := "-", "-", "-", "-"
			if n := len(s.Shims); n > 0 {
				r := s.Shims[n-1]
				if r.ChildPID > 0 {
					child = strconv.Itoa(r.ChildPID)
				}
				start := r.ChildStarted
				if start.IsZero() {
					start = r.Started
				}
				if !start.IsZero() && r.State != state.Idle { // no process runs
					up = now.Sub(start).Round(time.Second).String()
				}
				restarts = strconv.Itoa(r.Restarts)
				if r.LastExit != nil {
					exit = health.ExitText(r.LastExit)
				}
			}
			wrapped := "no"
			if s.Wrapped {
				wrapped = "yes"
			} else if s.Scope == claudecfg.ScopePlugin {
				wrapped = "no (plugin)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clip(text.Name(s.Name), 40), s.Scope, s.Transport, wrapped, s.Health, child, up, restarts, clip(exit, 40), clip(target(s.Server, home), 60))
		}
		tw.Flush()
		var notes []string
		for _, s := range rep.Servers {
			if s.HealthDetail != "" {
				notes = append(notes, fmt.Sprintf("  %s: %s", text.Name(s.Name), s.HealthDetail))
			}
			if s.Protects != "" {
				notes = append(notes, fmt.Sprintf("  %s: %s", text.Name(s.Name), health.ConflictNote(s.Protects)))
			}
			if d := health.DriftHint(Entry(s.Server), a); d != "" {
				notes = append(notes, fmt.Sprintf("  %s: %s", text.Name(s.Name), d))
			}
			for _, r := range s.Shims {
				if k := keep.Describe(r, now); k != "" {
					notes = append(notes, fmt.Sprintf("  %s: %s", text.Name(s.Name), k))
				}
				// A failed server's detail says its error; a healthy
				// one's last error is history, not news (issue 32:
				// "last error: command not found" beside an ok row).
				if r.LastError != "" && s.Health != health.Failing && s.Health != health.Healthy {
					notes = append(notes, fmt.Sprintf("  %s: last error: %s", text.Name(s.Name), clip(r.LastError, 200)))
				}
			}
		}
		if len(notes) > 0 {
			// Notes quote exit reasons, stderr and errors as the server
			// wrote them: each is quoted on its own, so a note's own line
			// break shows as \n while the notes stay one a line.
			fmt.Fprintln(w)
			for _, n := range notes {
				fmt.Fprintln(w, text.Safe(n))
			}
		}
		unwrapped := 0
		for _, s := range rep.Servers {
			// Unapproved project servers: wrap leaves them alone.
			if !s.Wrapped && s.Loaded() && s.NoWrap == "" && s.Scope != claudecfg.ScopePlugin && s.Scope != "other" {
				unwrapped++
			}
		}
		if unwrapped > 0 {
			fmt.Fprintf(w, "\n%s\n", health.UnprotectedLine(unwrapped, a))
		}
	}
	if len(rep.Incidents) > 0 {
		fmt.Fprintf(w, "\nRecent incidents:\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tSESSION\tSERVER\tEVENT\tCLASS\tACTION\tERROR")
		for _, in := range rep.Incidents {
			// An ended session's incident is history: the next
			// session starts every server afresh.
			sess := dash(health.ShortSession(in.Session))
			if in.SessionEnded {
				sess += " (ended)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", in.Time.Local().Format("15:04:05"), clip(sess, 20), clip(text.Name(in.Server), 40), in.Event, in.Class, dash(in.Action), clip(dash(redact.String(in.Error)), 60))
		}
		tw.Flush()
	}
}

// target shows what a server runs, without env or header values.
func target(s claudecfg.Server, home string) string {
	if s.URL != "" {
		return s.URL
	}
	return strings.TrimSpace(TildePath(s.Command, home) + " " + strings.Join(s.Args, " "))
}

// clip is how status shows a cell: one line, at most n runes, quoted by
// the one rule for text that came from a server (text.Safe).
func clip(s string, n int) string {
	s = text.Safe(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TildePath shortens a path under home to ~/...
func TildePath(p, home string) string {
	if home != "" && strings.HasPrefix(p, home+string(filepath.Separator)) {
		return "~" + p[len(home):]
	}
	return p
}
