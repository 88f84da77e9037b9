// Package statusline is `mcp-heal statusline`, the command for Claude
// Code's statusLine setting: one short line of MCP health for the session
// that runs it, e.g. `MCP 7/8 · memory restarted 2m ago`, and a quiet
// `MCP 8/8 ok` when all is well.
//
// Claude Code runs the command after each update of its screen (and every
// refreshInterval seconds) with a JSON object on stdin whose session_id
// names the session; it shows the first line of stdout, ANSI colours
// allowed. The line is worded from the same records `mcp-heal status`
// reads: the shim records of that session (state.FindSession). It starts
// no process, reads only bounded files through state's openers, and never
// fails: on any error it prints nothing and exits 0 (an empty status
// line), so a broken state directory never shows as an error in Claude
// Code's footer.
//
// cmd/mcp-heal runs Main from main, as every command.
// internal/statusline/setup prints and installs the settings lines.
package statusline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// RecentRestart is how long a restart is news in the line.
const RecentRestart = 15 * time.Minute

// MaxName bounds a server name in the line (bytes): the longest line
// (two-digit counts, "not answering 23h", "+98 more") fits 80 columns.
const MaxName = 18

// severity orders what the line names: the worst first.
type severity int

const (
	sevOK severity = iota
	sevRestarted
	sevStarting
	sevNotAnswering
	sevFailed
)

// news is what the line says about one server.
type news struct {
	sev  severity
	text string
	at   time.Time // for ties: the newest first
}

// ANSI colours (SGR); Claude Code renders them in the status line.
const (
	dim    = "\x1b[2m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	red    = "\x1b[31m"
	reset  = "\x1b[0m"
)

// Line is the status line for the records of one session's shims at now
// ("" when there is none: no wrapped server runs in the session, nothing
// to say). color adds ANSI colours.
func Line(recs []*state.Record, now time.Time, color bool) string {
	// The newest shim of each server speaks for it (after /mcp reconnect
	// an old one may linger while it stops).
	newest := map[string]*state.Record{}
	for _, r := range recs {
		if r == nil || r.State == state.Stopping {
			continue
		}
		if o := newest[r.Server]; o == nil || !r.Started.Before(o.Started) {
			newest[r.Server] = r
		}
	}
	if len(newest) == 0 {
		return ""
	}
	up := 0
	var all []news
	for _, r := range newest {
		n := judge(r, now)
		if n.sev == sevOK || n.sev == sevRestarted {
			up++
		}
		if n.sev != sevOK {
			all = append(all, n)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].sev != all[j].sev {
			return all[i].sev > all[j].sev
		}
		if !all[i].at.Equal(all[j].at) {
			return all[i].at.After(all[j].at)
		}
		return all[i].text < all[j].text
	})
	head := fmt.Sprintf("MCP %d/%d", up, len(newest))
	if len(all) == 0 {
		return paint(color, dim+green, head+" ok")
	}
	line := head + " · " + all[0].text
	if len(all) > 1 {
		line += fmt.Sprintf(" · +%d more", len(all)-1)
	}
	c := yellow
	if all[0].sev >= sevNotAnswering {
		c = red
	}
	return paint(color, c, line)
}

func paint(color bool, c, s string) string {
	if !color {
		return s
	}
	return c + s + reset
}

// judge is what the line says about server r.Server, by its newest shim.
// Whatever the user must do comes first (the house rule for every line a
// user may see): `run /mcp-heal doctor NAME: crash loop`.
func judge(r *state.Record, now time.Time) news {
	name := Name(r.Server)
	switch {
	case r.State == state.Failed && r.Failure == "cannot-start":
		return news{sevFailed, act("doctor", r.Server, "cannot start"), r.Updated}
	case r.State == state.Failed:
		return news{sevFailed, act("doctor", r.Server, "crash loop"), r.Updated}
	case r.Quiet() != nil:
		q := r.Quiet()
		return news{sevNotAnswering, act("heal", r.Server, "not answering "+ago(now.Sub(q.Since))), q.Since}
	case r.State == state.Restarting || r.State == state.Backoff:
		return news{sevStarting, name + " restarting", r.Updated}
	case r.State == state.Starting:
		return news{sevStarting, name + " starting", r.Updated}
	case r.Restarts > 0 && !r.ChildStarted.IsZero() && now.Sub(r.ChildStarted) < RecentRestart:
		return news{sevRestarted, name + " restarted " + ago(now.Sub(r.ChildStarted)) + " ago", r.ChildStarted}
	}
	return news{sev: sevOK}
}

// act is the command to run about server, first, then what is wrong:
// "run /mcp-heal doctor NAME: crash loop". A name that the one rule
// (text.Name) changes or that is clipped is left out of the command (the
// user could not type it as shown; doctor then lists every server) and
// shown after it.
func act(cmd, server, what string) string {
	if n := text.Name(server); n == server && len(n) <= MaxName {
		return "run /mcp-heal " + cmd + " " + n + ": " + what
	}
	return "run /mcp-heal " + cmd + ": " + Name(server) + " " + what
}

// Name is a server name as the line shows it: by the one rule for
// printing a name (text.Name: a plain name as it is, any other quoted and
// escaped, so no control character, escape or bidi control from a
// project's .mcp.json reaches the terminal), clipped to MaxName bytes with
// "…", a quoted one still closed.
func Name(server string) string {
	n := text.Name(server)
	if len(n) <= MaxName {
		return n
	}
	if strings.HasPrefix(n, `"`) {
		return text.Clip(n, MaxName-1) + `"`
	}
	return text.Clip(n, MaxName)
}

// ago is a duration as the line says it: 12s, 2m, 3h, 2d.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// Color reports whether the line may carry ANSI colours: Claude Code
// renders them, so yes unless NO_COLOR is set (https://no-color.org) or
// TERM is dumb.
func Color(getenv func(string) string) bool {
	return getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}
