package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	hv "github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

const statusHelp = `
Show every MCP server Claude Code would load for this project (local,
project, user and plugin scopes) with its transport, whether it runs through
mcp-heal, its health, the live shims of this Claude Code session
($CLAUDE_CODE_SESSION_ID; all sessions when unset) and the recent incidents
the hooks recorded. Env and header values are never shown.
`

type statusServer struct {
	claudecfg.Server
	Health       string          `json:"health"` // ok, failed, restarting, ..., unknown
	HealthDetail string          `json:"health_detail,omitempty"`
	Shims        []*state.Record `json:"shims,omitempty"`
	LastIncident *state.Incident `json:"last_incident,omitempty"`
}

type statusReport struct {
	Project   string           `json:"project"`
	Session   string           `json:"session,omitempty"`
	Servers   []statusServer   `json:"servers"`
	Incidents []state.Incident `json:"incidents"`
	Errors    []string         `json:"errors,omitempty"`
}

func runStatus(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("status")
	var cf cfgFlags
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	fs.StringVar(&cf.project, "project", "", "the project `DIR` (default: $CLAUDE_PROJECT_DIR, else the current directory)")
	if err := parseFlags(env, fs, "status [--json] [server...]", statusHelp, args); err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	a := hv.FromEnv(env.Getenv)
	rep := buildStatus(o, env.Getenv("CLAUDE_CODE_SESSION_ID"), time.Now(), fs.Args(), a)
	if missing := rep.missing(fs.Args()); len(missing) > 0 {
		all := buildStatus(o, rep.Session, time.Now(), nil, a)
		var servers []claudecfg.Server
		for _, s := range all.Servers {
			servers = append(servers, s.Server)
		}
		return noServer(o, missing, servers)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printStatus(env, rep, o.Home, time.Now(), a)
	return nil
}

func buildStatus(o claudecfg.Options, session string, now time.Time, only []string, a hv.Audience) statusReport {
	rep := statusReport{Project: o.ProjectDir, Session: session, Servers: []statusServer{}, Incidents: []state.Incident{}}
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
	known := map[string]bool{}
	for _, s := range servers {
		known[s.Name] = true
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		rep.Servers = append(rep.Servers, judged(statusServer{Server: redacted(s)}, mine, recent, now, a))
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
		rep.Servers = append(rep.Servers, judged(statusServer{Server: s}, mine, recent, now, a))
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

// missing returns the names asked for that the report has no server of.
func (rep statusReport) missing(names []string) []string {
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
func judged(s statusServer, recs []*state.Record, incidents []state.Incident, now time.Time, a hv.Audience) statusServer {
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
	v := hv.Judge(s.Server, shim, s.LastIncident, now, a)
	s.Health, s.HealthDetail = v.Health, v.Detail
	return s
}

func printStatus(env *Env, rep statusReport, home string, now time.Time, a hv.Audience) {
	for _, e := range rep.Errors {
		fmt.Fprintf(env.Stderr, "mcp-heal: warning: %s\n", e)
	}
	if len(rep.Servers) == 0 {
		fmt.Fprintf(env.Stdout, "No MCP servers configured for %s.\n", rep.Project)
	} else {
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
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
				if !start.IsZero() {
					up = now.Sub(start).Round(time.Second).String()
				}
				restarts = strconv.Itoa(r.Restarts)
				if r.LastExit != nil {
					exit = hv.ExitText(r.LastExit)
				}
			}
			wrapped := "no"
			if s.Wrapped {
				wrapped = "yes"
			} else if s.Scope == claudecfg.ScopePlugin {
				wrapped = "no (plugin)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Scope, s.Transport, wrapped, s.Health, child, up, restarts, clip(exit, 40), clip(target(s.Server, home), 60))
		}
		tw.Flush()
		var notes []string
		for _, s := range rep.Servers {
			if s.HealthDetail != "" && s.Health != "unknown" {
				notes = append(notes, fmt.Sprintf("  %s: %s", s.Name, s.HealthDetail))
			}
			for _, r := range s.Shims {
				if k := keep.Describe(r, now); k != "" {
					notes = append(notes, fmt.Sprintf("  %s: %s", s.Name, k))
				}
				if r.LastError != "" && s.Health != "failed" {
					notes = append(notes, fmt.Sprintf("  %s: last error: %s", s.Name, clip(r.LastError, 200)))
				}
			}
		}
		if len(notes) > 0 {
			fmt.Fprintf(env.Stdout, "\n%s\n", strings.Join(notes, "\n"))
		}
		unwrapped := 0
		for _, s := range rep.Servers {
			if !s.Wrapped && !s.Shadowed && s.Scope != claudecfg.ScopePlugin && s.Scope != "other" {
				unwrapped++
			}
		}
		if unwrapped > 0 {
			fmt.Fprintf(env.Stdout, "\n%d server(s) not protected by mcp-heal: run '%s' (then restart Claude Code).\n", unwrapped, a.Cmd("wrap --all"))
		}
	}
	if len(rep.Incidents) > 0 {
		fmt.Fprintf(env.Stdout, "\nRecent incidents:\n")
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tSERVER\tEVENT\tCLASS\tACTION\tERROR")
		for _, in := range rep.Incidents {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Time.Local().Format("15:04:05"), in.Server, in.Event, in.Class, dash(in.Action), clip(dash(redact.String(in.Error)), 60))
		}
		tw.Flush()
	}
}

// redacted drops what looks like a secret from a server's command line and
// URL (tokens in arguments or query strings); env and header values are
// never serialised at all.
func redacted(s claudecfg.Server) claudecfg.Server { return s.Redacted() }

// target shows what a server runs, without env or header values.
func target(s claudecfg.Server, home string) string {
	if s.URL != "" {
		return s.URL
	}
	return strings.TrimSpace(tildePath(s.Command, home) + " " + strings.Join(s.Args, " "))
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
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
