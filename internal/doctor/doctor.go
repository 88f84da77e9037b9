// Package doctor checks configured MCP servers for real (a probe of each
// command or URL, the state of its shims, recent incidents) and turns what
// it finds into findings with a severity and a hint; Heal then fixes what
// can be fixed from outside Claude Code (restarting a failed shim's child
// with SIGHUP) and says what the user must still do inside it.
package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/probe"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/status"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Severity of a finding.
type Severity string

const (
	OK    Severity = "ok"
	Warn  Severity = "warn"
	Error Severity = "error"
)

// Finding is one thing doctor learned about a server.
type Finding struct {
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	Detail   []string `json:"detail,omitempty"` // e.g. the server's last stderr lines
}

// Report is what doctor (and heal) found and did for one server.
type Report struct {
	Server    claudecfg.Server `json:"server"`
	Probe     *probe.Result    `json:"probe,omitempty"`
	Shims     []*state.Record  `json:"shims,omitempty"`
	Incidents []state.Incident `json:"incidents,omitempty"` // open ones (state.OpenIncidents), oldest first
	Findings  []Finding        `json:"findings"`
	Actions   []string         `json:"actions,omitempty"` // what heal did
	// Next is what the user must do in Claude Code, if anything.
	Next string `json:"next,omitempty"`
}

// Worst is the highest severity among the findings.
func (r *Report) Worst() Severity {
	w := OK
	for _, f := range r.Findings {
		if f.Severity == Error {
			return Error
		}
		if f.Severity == Warn {
			w = Warn
		}
	}
	return w
}

// Doctor holds the outside world doctor uses; New fills in the real one.
type Doctor struct {
	Probe   func(ctx context.Context, s claudecfg.Server, dir string) probe.Result
	Signal  func(pid int, sig syscall.Signal) error
	Now     func() time.Time
	Timeout time.Duration // per probe
	Dir     string        // the project directory servers start in
	// Parallel bounds concurrent probes (each may spawn a server).
	Parallel int
	// Say is who reads the hints: they name commands it can run.
	Say health.Audience
	// Done, when set, is called with each report as soon as it is
	// judged (in the order the probes finish, one call at a time), so a
	// long run can show each verdict as it comes.
	Done func(*Report)
}

// New returns a Doctor for the project in dir.
func New(dir string, timeout time.Duration) *Doctor {
	d := &Doctor{Signal: state.NudgeShim, Now: time.Now, Timeout: timeout, Dir: dir, Parallel: 4}
	d.Probe = func(ctx context.Context, s claudecfg.Server, dir string) probe.Result {
		return probe.Run(ctx, probe.FromServer(s, dir), d.Timeout)
	}
	return d
}

// Check probes every server (in parallel, bounded) and reports on each, in
// the order given.
func (d *Doctor) Check(ctx context.Context, servers []claudecfg.Server) []*Report {
	recs, _ := state.List()
	incidents, _ := state.ReadIncidents(state.MaxIncidentBytes, d.Now().Add(-state.IncidentWindow))
	out := make([]*Report, len(servers))
	sem := make(chan struct{}, max(1, d.Parallel))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, s := range servers {
		r := &Report{Server: s}
		out[i] = r
		if s.NotRun() != "" {
			// Listed, never run: the shims and incidents of its name
			// belong to the entry Claude Code loaded instead.
			d.judge(r)
			if d.Done != nil {
				mu.Lock()
				d.Done(r)
				mu.Unlock()
			}
			continue
		}
		for _, rec := range recs {
			if rec.Server == s.Name {
				r.Shims = append(r.Shims, rec)
			}
		}
		r.Incidents = state.OpenIncidents(incidents, s.Name, "", d.Now())
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res := d.Probe(ctx, s, d.Dir)
			r.Probe = &res
			d.judge(r)
			if d.Done != nil {
				mu.Lock()
				defer mu.Unlock()
				d.Done(r)
			}
		}()
	}
	wg.Wait()
	return out
}

// judge turns what was gathered into findings.
func (d *Doctor) judge(r *Report) {
	s, p := r.Server, r.Probe
	add := func(sev Severity, msg, hint string, detail ...string) {
		r.Findings = append(r.Findings, Finding{Severity: sev, Message: msg, Hint: hint, Detail: detail})
	}
	if s.Policy != nil {
		add(Warn, "not run: "+s.Policy.Why, "")
		return
	}
	if s.Unapproved() {
		add(Warn, ccpolicy.NotApproved(s.Approval), health.NotApprovedHint(status.Entry(s), d.Say))
		if hint := health.DriftHint(status.Entry(s), d.Say); hint != "" {
			// wrap's local copy of it: Claude Code runs that unasked.
			add(Error, "a local copy that mcp-heal made of this project server still runs it", hint)
		}
		return
	}
	switch {
	case p.OK:
		who := p.ServerName
		if p.ServerVersion != "" {
			who += " " + p.ServerVersion
		}
		add(OK, fmt.Sprintf("answers: %s, %d tools, protocol %s (%s)", who, len(p.Tools), p.ProtocolVersion, p.Elapsed.Round(time.Millisecond)), "")
		for _, w := range p.Warnings {
			add(Warn, w, "")
		}
	case p.Problem != nil:
		add(Error, p.Problem.Summary, p.Problem.Hint, p.Problem.Stderr...)
	}
	switch {
	case !s.Wrapped && s.Scope != claudecfg.ScopePlugin && s.NoWrap != "":
		add(OK, "not wrapped, and wrap leaves it alone: "+s.NoWrap, "")
	case !s.Wrapped && s.Scope != claudecfg.ScopePlugin:
		add(Warn, health.UnprotectedNote, d.Say.Cmd("wrap "+text.Name(s.Name)))
	}
	if s.Protects != "" {
		add(OK, health.ConflictNote(s.Protects), "")
	}
	if hint := health.DriftHint(status.Entry(s), d.Say); hint != "" {
		add(Warn, "the local entry that protects this project server is out of date", hint)
	}
	for _, rec := range r.Shims {
		switch {
		case rec.State == state.Failed:
			what, todo := health.FailedShim(rec, s.Name, d.Say)
			add(Error, fmt.Sprintf("shim %d (session %s): %s; calls fail until it starts", rec.ShimPID, short(rec.Session), what), todo)
		case rec.State == state.Restarting, rec.State == state.Backoff:
			add(Warn, fmt.Sprintf("shim %d (session %s): %s after %d restarts (%s)", rec.ShimPID, short(rec.Session), rec.State, rec.Restarts, health.ExitSummary(rec)), "")
		case rec.Quiet() != nil:
			// Its action ("wait, or run ...") becomes the hint, so the
			// finding reads first and the hint line starts with what to do.
			todo, what, _ := strings.Cut(health.NotAnswering(rec, s.Name, d.Now(), d.Say), ": ")
			add(Warn, fmt.Sprintf("shim %d (session %s): %s", rec.ShimPID, short(rec.Session), what), todo)
		}
	}
	if why := keep.Explain(s.Name); why != "" {
		add(Warn, why, "") // shim --keep (docs/keeper.md)
	}
	for _, in := range r.Incidents {
		msg := fmt.Sprintf("%s: Claude Code reported %s", in.Time.Local().Format("Jan 2 15:04:05"), in.Class)
		if in.Action != "" && in.Action != health.ActNone {
			msg += "; the hook " + health.ActionWords(in.Action)
		}
		add(Warn, msg, health.IncidentHint(in.Class, s.Name, d.Say))
	}
}

func short(session string) string {
	if len(session) > 8 {
		return session[:8]
	}
	if session == "" {
		return "?"
	}
	return session
}

// Sorted returns servers sorted by name, without shadowed entries. A
// project server the user has not approved is kept (doctor lists it as
// not run) but comes after the entry of the same name Claude Code loads
// instead, so that naming the server (doctor NAME, heal NAME) picks the
// user's own.
func Sorted(servers []claudecfg.Server) []claudecfg.Server {
	var out []claudecfg.Server
	for _, s := range servers {
		if !s.Shadowed {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].NotRun() == "" && out[j].NotRun() != ""
	})
	return out
}
