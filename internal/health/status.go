package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
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

// Report is `status`: every server, its shims and recent incidents.
type Report struct {
	Project   string           `json:"project"`
	Session   string           `json:"session,omitempty"`
	Servers   []Server         `json:"servers"`
	Incidents []state.Incident `json:"incidents"`
	Errors    []string         `json:"errors,omitempty"`
}

// Status gathers what `status` shows for the project of o: the servers
// Claude Code would load (only those named, when only is not empty), the
// live shims of session (all sessions when empty), incidents of the last
// day, and each server's verdict. What cannot be read goes to Errors.
func Status(o claudecfg.Options, session string, now time.Time, only []string, a Audience) Report {
	rep := Report{Project: o.ProjectDir, Session: session, Servers: []Server{}, Incidents: []state.Incident{}}
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
		if session == "" || r.Session == session || (r.Kept && !r.Attached) {
			mine = append(mine, r)
		}
	}
	all, err := state.Incidents("", 500)
	if err != nil {
		rep.Errors = append(rep.Errors, "read incidents: "+err.Error())
	}
	var recent []state.Incident
	for _, in := range all {
		if now.Sub(in.Time) > 24*time.Hour || (session != "" && in.Session != "" && in.Session != session) {
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
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		recs, ins := mine, recent
		if s.Unapproved() && loaded[s.Name] {
			// The shims and incidents of the name are those of the
			// entry Claude Code loads instead (claudecfg.Lookup).
			recs, ins = nil, nil
		}
		rep.Servers = append(rep.Servers, judged(Server{Server: redacted(s)}, recs, ins, now, a))
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
		rep.Servers = append(rep.Servers, judged(Server{Server: s}, mine, recent, now, a))
	}
	for _, in := range recent {
		if len(want) == 0 || want[in.Server] {
			rep.Incidents = append(rep.Incidents, in)
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

// judged fills in what status says about one server: its shims, its
// latest incident and the verdict (health.Judge).
func judged(s Server, recs []*state.Record, incidents []state.Incident, now time.Time, a Audience) Server {
	for _, r := range recs {
		if r.Server == s.Name {
			s.Shims = append(s.Shims, r)
		}
	}
	for i := len(incidents) - 1; i >= 0; i-- {
		if incidents[i].Server == s.Name {
			in := incidents[i]
			s.LastIncident = &in
			break
		}
	}
	var shim *state.Record
	if len(s.Shims) > 0 {
		shim = s.Shims[len(s.Shims)-1]
	}
	judged, why := answered(s.LastIncident)
	v := Judge(s.Server, shim, judged, now, a)
	s.Health, s.HealthDetail = v.Health, v.Detail
	if v.Health == Healthy && v.Detail == "" {
		s.HealthDetail = why
	}
	return s
}

// answered returns the incident to judge by: in itself, or, when a call
// to its server in its session went out after it and no failure was
// recorded since (state.CalledDir), an ok of that time. The PreToolUse
// hook records that ok at the next call; status need not wait for one,
// but says what it goes by: the call may still be running.
func answered(in *state.Incident) (*state.Incident, string) {
	if in == nil || in.Class == string(OK) {
		return in, ""
	}
	if at, ok := state.CalledAt(in.Session, in.Server); ok && at.After(in.Time) {
		return &state.Incident{Session: in.Session, Server: in.Server, Time: at, Class: string(OK), Action: ActHealthy},
			fmt.Sprintf("called again at %s after %s at %s, and no failure since", at.Local().Format("15:04:05"), in.Class, in.Time.Local().Format("15:04:05"))
	}
	return in, ""
}

// Open returns the incidents of server still open, oldest first: for each
// session, its latest incident of server, unless that is ok, older than
// IncidentWindow, or answered since (a call of that session marked after
// it, state.CalledDir). The rule status judges by and the hooks close
// incidents by; all is the incident log, oldest first.
func Open(all []state.Incident, server string, now time.Time) []state.Incident {
	latest := map[string]int{}
	for i, in := range all {
		if in.Server == server {
			latest[in.Session] = i
		}
	}
	var out []state.Incident
	for i, in := range all {
		if in.Server != server || latest[in.Session] != i || now.Sub(in.Time) > IncidentWindow {
			continue
		}
		if j, _ := answered(&in); j.Class != string(OK) {
			out = append(out, in)
		}
	}
	return out
}

// redacted drops what looks like a secret from a server's command line and
// URL (tokens in arguments or query strings); env and header values are
// never serialised at all.
func redacted(s claudecfg.Server) claudecfg.Server { return s.Redacted() }
