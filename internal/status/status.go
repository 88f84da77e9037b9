// Package status is `mcp-heal status`: every server Claude Code would load
// for a project, its shims, its recent incidents and its verdict, as a
// report and as the table printed. It reads the vocabulary
// (internal/health) and the state the shims and hooks write; it is apart
// from internal/health so that what imports the vocabulary (the shim, the
// hooks) does not import what the report reads (internal/keep and, through
// it, the guardian and the process code).
package status

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Server is what `status` says about one configured server (or the
// shim of one no config file here names).
type Server struct {
	claudecfg.Server
	Health       string          `json:"health"` // ok, failed, restarting, ..., unknown
	HealthDetail string          `json:"health_detail,omitempty"`
	Shims        []*state.Record `json:"shims,omitempty"`
	LastIncident *state.Incident `json:"last_incident,omitempty"`
}

// Incident is a recent incident as status lists it.
type Incident struct {
	state.Incident
	// SessionEnded: its session's Claude Code is gone, so it is history,
	// not the server's health (state.SessionEnded).
	SessionEnded bool `json:"session_ended,omitempty"`
}

// Report is `status`: every server, its shims and recent incidents.
type Report struct {
	Project   string     `json:"project"`
	Session   string     `json:"session,omitempty"`
	Servers   []Server   `json:"servers"`
	Incidents []Incident `json:"incidents"`
	Errors    []string   `json:"errors,omitempty"`
}

// Status gathers what `status` shows for the project of o: the servers
// Claude Code would load (only those named, when only is not empty), the
// live shims of session (state.InSession: its id or the Claude Code of
// claudePID; all sessions when both are unset), incidents of the last
// day, and each server's verdict. What cannot be read goes to Errors.
func Status(o claudecfg.Options, session string, claudePID int, now time.Time, only []string, a health.Audience) Report {
	rep := Report{Project: o.ProjectDir, Session: session, Servers: []Server{}, Incidents: []Incident{}}
	servers, err := claudecfg.Discover(o)
	if err != nil {
		rep.Errors = append(rep.Errors, strings.Split(err.Error(), "\n")...)
	}
	recs, err := state.List()
	if err != nil {
		rep.Errors = append(rep.Errors, "read shim records: "+err.Error())
	}
	var mine []*state.Record
	for _, r := range recs {
		// A kept server no client is attached to belongs to no session
		// yet: show it (internal/keep).
		if state.InSession(r, session, claudePID) || (r.Kept && !r.Attached) {
			mine = append(mine, r)
		}
	}
	all, err := state.ReadIncidents(state.MaxIncidentBytes, now.Add(-24*time.Hour))
	if err != nil {
		rep.Errors = append(rep.Errors, "read incidents: "+err.Error())
	}
	// Incidents belong to a session. Inside Claude Code status is about
	// that session; in a shell, about every session, each incident
	// naming its own, and an ended session's incidents are history,
	// not a server's health (state.IsOpen).
	var recent []state.Incident
	for _, in := range all {
		if now.Sub(in.Time) > 24*time.Hour || !state.SameSession(in.Session, session) {
			continue
		}
		recent = append(recent, in)
	}
	want := map[string]bool{}
	for _, n := range only {
		want[n] = true
	}
	known, loaded := map[string]bool{}, map[string]bool{}
	for _, s := range servers {
		loaded[s.Name] = loaded[s.Name] || s.Loaded()
	}
	for _, s := range servers {
		known[s.Name] = true
		if (len(want) > 0 && !want[s.Name]) || protected(s, servers) {
			continue
		}
		recs, ins := mine, recent
		if s.Unapproved() && loaded[s.Name] {
			// The shims and incidents of the name are those of the
			// entry Claude Code loads instead (claudecfg.Lookup).
			recs, ins = nil, nil
		}
		rep.Servers = append(rep.Servers, judged(Server{Server: redacted(s)}, recs, ins, session, now, a))
	}
	// Shims of servers no config file here names (e.g. --mcp-config).
	for _, r := range mine {
		if known[r.Server] || (len(want) > 0 && !want[r.Server]) {
			continue
		}
		known[r.Server] = true
		s := claudecfg.Server{Name: r.Server, Scope: "other", Wrapped: true, Transport: "stdio"}
		if r.Mode == state.ModeRemote {
			s.Transport, s.URL = "http", r.Target
		} else {
			s.Command = r.Target
		}
		rep.Servers = append(rep.Servers, judged(Server{Server: s}, mine, recent, session, now, a))
	}
	for _, in := range recent {
		if len(want) == 0 || want[in.Server] {
			rep.Incidents = append(rep.Incidents, Incident{Incident: in, SessionEnded: state.SessionEnded(&in)})
		}
	}
	if len(rep.Incidents) > 20 {
		rep.Incidents = rep.Incidents[len(rep.Incidents)-20:]
	}
	return rep
}

// Missing returns the names asked for that the report has no server of.
func (rep Report) Missing(names []string) []string {
	var out []string
	for _, n := range names {
		found := false
		for _, s := range rep.Servers {
			found = found || s.Name == n
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// protected reports whether s is a project server that a local entry
// made by wrap stands in for (claudecfg, project.go): status shows the
// server once, as that local entry, which is what Claude Code runs.
func protected(s claudecfg.Server, all []claudecfg.Server) bool {
	if s.Scope != claudecfg.ScopeProject || !s.Shadowed {
		return false
	}
	for _, l := range all {
		if l.Scope == claudecfg.ScopeLocal && l.Name == s.Name && l.Protects == s.File {
			return true
		}
	}
	return false
}

// judged fills in what status says about one server: its shims, its
// latest incident and the verdict (health.Judge), by the incidents still
// open (state.OpenIncidents) of session ("" in a shell: every session).
func judged(s Server, recs []*state.Record, incidents []state.Incident, session string, now time.Time, a health.Audience) Server {
	for _, r := range recs {
		if r.Server == s.Name {
			s.Shims = append(s.Shims, r)
		}
	}
	if in := state.LatestIncident(incidents, s.Name, session); in != nil {
		c := *in
		s.LastIncident = &c
	}
	var shim *state.Record
	if len(s.Shims) > 0 {
		shim = s.Shims[len(s.Shims)-1]
	}
	judge, why := s.LastIncident, ""
	if open := state.OpenIncidents(incidents, s.Name, session, now); len(open) > 0 {
		in := open[len(open)-1]
		if session != "" {
			in.Session = "" // the reader's own: "this session"
		}
		judge = &in
	} else if judge != nil && judge.Class != string(health.OK) {
		judge, why = closed(judge)
	}
	e := Entry(s.Server)
	if shim == nil {
		// No shim runs it: one that died (killed or crashed) in a
		// session that still runs is why (state.FindGone).
		if gone := state.FindGone(s.Name, session, 0); len(gone) > 0 && s.Wrapped {
			e.Gone = gone[0]
		}
	}
	v := health.Judge(e, shim, judge, now, a)
	s.Health, s.HealthDetail = v.Health, v.Detail
	if v.Health == health.Healthy && v.Detail == "" {
		s.HealthDetail = why
	}
	return s
}

// closed returns what to judge by when in, the latest incident, is no
// longer open: an ok of the later call that answered it, saying so (the
// PreToolUse hook records that ok at the next call; status need not wait
// for it, the call may still be running), or nothing (it aged out, or its
// session ended).
func closed(in *state.Incident) (*state.Incident, string) {
	if at, ok := state.Answered(in); ok {
		return &state.Incident{Session: in.Session, Server: in.Server, Time: at, Class: string(health.OK), Action: health.ActHealthy},
			fmt.Sprintf("called again at %s after %s at %s, and no failure since", at.Local().Format("15:04:05"), in.Class, in.Time.Local().Format("15:04:05"))
	}
	return nil, ""
}

// redacted drops what looks like a secret from a server's command line and
// URL (tokens in arguments or query strings); env and header values are
// never serialised at all.
func redacted(s claudecfg.Server) claudecfg.Server { return s.Redacted() }

// Entry is what health reads of configured server s (health does not
// import the config package: the shim links health).
func Entry(s claudecfg.Server) health.Entry {
	return health.Entry{Name: s.Name, File: s.File, Wrapped: s.Wrapped, Shadowed: s.Shadowed, Approval: s.Approval, Protects: s.Protects, Drift: s.Drift, Policy: s.Policy}
}
