package doctor

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// stuckAfter is how long a shim may stay restarting or in backoff before
// heal treats it as hung.
const stuckAfter = 2 * time.Minute

// Heal checks the servers, then fixes what can be fixed now: a shim whose
// child crash-looped (failed) or is stuck restarting is told to restart it
// (SIGHUP) once the server's command works again. It fills in each
// report's Actions and Next (what the user must do in Claude Code).
func (d *Doctor) Heal(ctx context.Context, reports []*Report) {
	for _, r := range reports {
		d.heal(r)
	}
}

func (d *Doctor) heal(r *Report) {
	if r.Server.NotRun() != "" {
		return // never run, so nothing of it to heal (Check)
	}
	name := r.Server.Name
	works := r.Probe != nil && r.Probe.OK
	healed := false
	for _, rec := range r.Shims {
		stuck := (rec.State == state.Restarting || rec.State == state.Backoff) && d.Now().Sub(rec.Updated) > stuckAfter
		// A server not answering runs: its command works. Silence alone
		// is no proof of a hang, so the shim waits; heal is the user's
		// request to restart it.
		quiet := rec.Quiet() != nil
		if rec.State != state.Failed && !stuck && !quiet {
			continue
		}
		if quiet {
			if err := state.SignalShim(rec, syscall.SIGHUP, d.Signal); err != nil {
				r.Actions = append(r.Actions, fmt.Sprintf("could not signal shim %d: %v", rec.ShimPID, err))
				continue
			}
			healed = true
			r.Actions = append(r.Actions, fmt.Sprintf("restarted the server under shim %d (session %s), which had not answered for %s", rec.ShimPID, short(rec.Session), d.Now().Sub(rec.Quiet().Since).Round(time.Second)))
			continue
		}
		if !works {
			r.Actions = append(r.Actions, fmt.Sprintf("left shim %d alone: the server's command still fails", rec.ShimPID))
			continue
		}
		if err := state.SignalShim(rec, syscall.SIGHUP, d.Signal); err != nil {
			r.Actions = append(r.Actions, fmt.Sprintf("could not signal shim %d: %v", rec.ShimPID, err))
			continue
		}
		healed = true
		r.Actions = append(r.Actions, fmt.Sprintf("restarted the server under shim %d (session %s)", rec.ShimPID, short(rec.Session)))
		_ = state.AppendIncident(state.Incident{Session: rec.Session, Server: name, Event: "heal", Class: string(health.ShimFailed), Error: health.ExitSummary(rec), Action: health.ActSighup})
	}
	reconnect := false
	for _, in := range r.Incidents {
		if health.NeedsReconnect(in.Class) {
			reconnect = true
		}
	}
	switch {
	case !works && r.Probe != nil && r.Probe.Problem != nil:
		r.Next = fmt.Sprintf("fix %s first: %s", text.Name(name), r.Probe.Problem.Hint)
		if reconnect || !r.Server.Wrapped {
			r.Next += "; then run " + d.Say.Reconnect(name)
		}
	case reconnect && !healed:
		r.Next = fmt.Sprintf("run %s: Claude Code gave up on it for this session and will not retry by itself", d.Say.Reconnect(name))
	case healed:
		r.Next = nextNothing
	}
}

// Healed reports whether heal restarted something and nothing is left
// for the user.
func (r *Report) Healed() bool {
	return r.Next == nextNothing
}

const nextNothing = "nothing to run: the shim keeps Claude Code's connection, so the next call reaches the restarted server"
