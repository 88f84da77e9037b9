package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/doctor"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/probe"
)

const doctorHelp = `Probe MCP servers for real and explain what is wrong: start each server's
command (or POST initialize to its URL) with a timeout, complete the MCP
handshake, list its tools, and check its shims and recent incidents.
Without a name, every server Claude Code would load for this project.
Exits 1 when a server has an error.`

// checkFlags are doctor's and heal's flags.
type checkFlags struct {
	cfgFlags
	json    bool
	timeout time.Duration
}

// check parses doctor's or heal's command line and finds the servers.
func check(env *Env, name string, args []string, synopsis, help string) (*checkFlags, *doctor.Doctor, []claudecfg.Server, error) {
	f := &checkFlags{}
	fs := newFlags(name)
	fs.BoolVar(&f.json, "json", false, "print JSON instead of the report")
	fs.DurationVar(&f.timeout, "timeout", probe.DefaultTimeout, "how long each server gets to start and answer")
	fs.StringVar(&f.project, "project", "", "the project `DIR` (default: $CLAUDE_PROJECT_DIR, else the current directory)")
	if err := parseFlags(env, fs, synopsis, help, args); err != nil {
		return nil, nil, nil, err
	}
	if fs.NArg() > 1 {
		return nil, nil, nil, &usageError{msg: "give at most one server name", hint: "run 'mcp-heal " + name + " --help'"}
	}
	if f.timeout <= 0 {
		return nil, nil, nil, &usageError{msg: fmt.Sprintf("--timeout must be positive, not %s", f.timeout)}
	}
	o, err := f.options(env)
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := claudecfg.Discover(o)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-heal: warning: %v\n", err)
	}
	// Every server Claude Code loads (not shadowed), or the one named.
	servers := doctor.Sorted(all)
	if fs.NArg() == 1 {
		if servers, err = claudecfg.Select(servers, fs.Args()); err != nil {
			return nil, nil, nil, noServerError(o.ProjectDir, fs.Args(), doctor.Sorted(all))
		}
	}
	d := doctor.New(o.ProjectDir, f.timeout)
	d.Say = health.FromEnv(env.Getenv)
	return f, d, servers, nil
}

func runDoctor(ctx context.Context, env *Env, args []string) error {
	f, d, servers, err := check(env, "doctor", args, "doctor [flags] [server]", doctorHelp)
	if err != nil {
		return err
	}
	if !f.json {
		if len(servers) == 0 {
			fmt.Fprintf(env.Stdout, "No MCP servers configured for %s.\n", d.Dir)
			return nil
		}
		// Each verdict as soon as its probe ends: a slow server does not
		// hold back the others.
		first := true
		d.Done = func(r *doctor.Report) {
			if !first {
				fmt.Fprintln(env.Stdout)
			}
			first = false
			doctor.Redacted([]*doctor.Report{r})[0].WriteText(env.Stdout)
		}
	}
	reports := d.Check(ctx, servers)
	if f.json {
		writeJSON(env.Stdout, doctor.Redacted(reports))
	}
	for _, r := range reports {
		if r.Worst() == doctor.Error {
			return &exitError{code: 1}
		}
	}
	return nil
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}
