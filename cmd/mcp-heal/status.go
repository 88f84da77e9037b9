package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/status"
)

const statusHelp = `
Show every MCP server Claude Code would load for this project (local,
project, user and plugin scopes) with its transport, whether it runs through
mcp-heal, its health, the live shims of this Claude Code session
($CLAUDE_CODE_SESSION_ID; all sessions when unset) and the recent incidents
the hooks recorded. Env and header values are never shown.
`

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
	a, session, now := health.FromEnv(env.Getenv), env.Getenv("CLAUDE_CODE_SESSION_ID"), time.Now()
	claudePID, _ := strconv.Atoi(env.Getenv("CLAUDE_PID"))
	rep := status.Status(o, session, claudePID, now, fs.Args(), a)
	if missing := rep.Missing(fs.Args()); len(missing) > 0 {
		var known []claudecfg.Server
		for _, s := range status.Status(o, session, claudePID, now, nil, a).Servers {
			known = append(known, s.Server)
		}
		return noServerError(o.ProjectDir, missing, known)
	}
	if a == health.Claude && health.Headless(env.Getenv) {
		for i, s := range rep.Servers {
			rep.Servers[i].HealthDetail = health.ForHeadless(s.HealthDetail, s.Name)
		}
	}
	if *asJSON {
		writeJSON(env.Stdout, rep)
		return nil
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(env.Stderr, "mcp-heal: warning: %s\n", e)
	}
	rep.WriteText(env.Stdout, o.Home, now, a)
	return nil
}
