package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg/wrap"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/status"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

const wrapHelp = `
Make Claude Code launch MCP servers through 'mcp-heal shim', which restarts
them and retries calls when they fail. Local and user entries are rewritten
in place (every other byte kept, a backup in the state directory); project
servers (.mcp.json, usually shared) get a local entry of the same name
instead, unless --project-servers says otherwise. Wrapping twice is wrapping
once; 'mcp-heal unwrap' restores each entry exactly. Restart Claude Code or
'/mcp reconnect <name>' to apply. Details: docs/config-rewriting.md.
`

const unwrapHelp = `
Undo 'mcp-heal wrap': give each wrapped entry back its original bytes, and
remove the local entries that protected project servers. A backup goes to
the state directory. Kept servers (wrap --keep) of the servers named are
stopped: nothing would attach to them again.
`

func runWrap(ctx context.Context, env *Env, args []string) error {
	return runRewrite(env, args, false)
}

// cfgFlags are the flags shared by the config commands.
type cfgFlags struct {
	project string
}

func (f *cfgFlags) options(env *Env) (claudecfg.Options, error) {
	return ccpolicy.FromEnv(env.Getenv, f.project, "")
}

func runRewrite(env *Env, args []string, unwrap bool) error {
	name, synopsis, help := "wrap", "wrap [server...|--all] [--scope SCOPE] [--project-servers MODE] [--keep DURATION] [--dry-run] [--shim PATH]", wrapHelp
	if unwrap {
		name, synopsis, help = "unwrap", "unwrap [server...|--all] [--scope SCOPE] [--dry-run]", unwrapHelp
	}
	fs := newFlags(name)
	var cf cfgFlags
	all := fs.Bool("all", false, "every server (instead of naming them)")
	scope := fs.String("scope", "all", "`SCOPE` to rewrite: project, user, local or all")
	dry := fs.Bool("dry-run", false, "print a diff of what would change, and every note, and write nothing")
	var req wrap.Request
	var keepFor time.Duration
	if !unwrap {
		fs.DurationVar(&keepFor, "keep", 0, "stdio servers keep running this long after Claude Code lets go of them, and the next session or /mcp reconnect re-attaches (see docs/keeper.md)")
		fs.StringVar(&req.Shim, "shim", "", "the mcp-heal binary the entries run (default: $XDG_DATA_HOME/mcp-heal/bin/mcp-heal if present, else this binary)")
		fs.StringVar(&req.Project, "project-servers", wrap.ProjectLocal, "what to do with project (.mcp.json) servers: `MODE` local (protect them with a local entry; .mcp.json unchanged), skip, or rewrite (.mcp.json itself, shared with your team)")
	}
	fs.StringVar(&cf.project, "project", "", "the project `DIR` (default: $CLAUDE_PROJECT_DIR, else the current directory)")
	if err := parseFlags(env, fs, synopsis, help, args); err != nil {
		return err
	}
	req.Unwrap, req.Names, req.Scope = unwrap, fs.Args(), *scope
	switch {
	case *all && len(req.Names) > 0:
		return &usageError{msg: "give server names or --all, not both"}
	case !*all && len(req.Names) == 0 && !*dry:
		return &usageError{msg: "no servers named", hint: fmt.Sprintf("run 'mcp-heal %s --all', or name servers: 'mcp-heal status' lists them", name)}
	}
	// (A preview of everything is harmless: `/mcp-heal wrap --dry-run`.)
	if err := req.Complete(keepFor); err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	plan, err := wrap.NewPlan(o, req)
	if err != nil {
		return err
	}
	if err := plan.MissingError(*scope); err != nil {
		return err
	}
	home := o.Home
	tilde := func(p string) string { return status.TildePath(p, home) }
	if *dry {
		fmt.Fprint(env.Stdout, plan.Diff(tilde))
	} else {
		backups, err := plan.Commit()
		for _, b := range backups {
			if b.Backup != "" {
				fmt.Fprintf(env.Stderr, "mcp-heal: backup of %s: %s\n", tilde(b.File), b.Backup)
			}
		}
		if err != nil {
			return err
		}
	}
	printPlan(env, plan, req, *dry, o.ProjectDir, tilde)
	if unwrap && !*dry {
		return stopKept(env, plan.Rows)
	}
	return nil
}

// stopKept stops the kept servers (--keep) of the servers unwrap covered,
// wrapped or not any more: a kept server outlives Claude Code by design,
// so without this one kept running after unwrap, and after the plugin was
// uninstalled, its guardian running a deleted binary (issue 18).
func stopKept(env *Env, rows []wrap.Row) error {
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if _, err := keep.StopNamed(name, func(pid int) {
			fmt.Fprintf(env.Stdout, "%s: stopped its kept server (pid %d)\n", text.Name(name), pid)
		}); err != nil {
			return err
		}
	}
	return nil
}

// printPlan prints one line an entry, the plan's notes (the same in a dry
// run as for real) and what to do next.
func printPlan(env *Env, plan *wrap.Plan, req wrap.Request, dry bool, project string, tilde func(string) string) {
	var reconnect []string
	changed := map[string]bool{}
	for _, r := range plan.Rows {
		if r.Changed() {
			changed[r.Name] = true
		}
	}
	for _, r := range plan.Rows {
		if r.Action == wrap.ActNotWrapped && changed[r.Name] {
			// One server, two entries: a project server and the local
			// copy that protected it. Unwrapping the copy is the
			// server's unwrap; "not wrapped" of the entry it stood for
			// read as a failure (issue 32).
			continue
		}
		verb := r.Action
		if dry && r.Changed() {
			verb = "would be " + verb
		}
		line := fmt.Sprintf("%s: %s (%s, %s)", text.Name(r.Name), verb, r.Scope, tilde(r.File))
		if r.Detail != "" {
			line += ": " + r.Detail
		}
		fmt.Fprintln(env.Stdout, line)
		if r.Changed() {
			reconnect = append(reconnect, r.Name)
		}
	}
	if len(plan.Rows) == 0 {
		fmt.Fprintf(env.Stdout, "no MCP servers configured for %s\n", project)
		return
	}
	for _, n := range plan.Notes(req, tilde(req.Shim), health.FromEnv(env.Getenv).Cmd("status")) {
		fmt.Fprintln(env.Stdout, "Note: "+n)
	}
	switch {
	case dry:
		fmt.Fprintln(env.Stdout, "dry run: nothing was written")
	case len(reconnect) > 0:
		sort.Strings(reconnect)
		fmt.Fprintf(env.Stdout, "Restart Claude Code to apply, or run in it: %s.\n", health.ReconnectEach(slices.Compact(reconnect)))
	}
}

// runUnwrap undoes wrap; the work is shared with it.
func runUnwrap(ctx context.Context, env *Env, args []string) error {
	return runRewrite(env, args, true)
}
