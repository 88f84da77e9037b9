package main

import (
	"context"
	"fmt"

	"github.com/mcp-heal/mcp-heal/internal/doctor"
)

const healHelp = `Fix what can be fixed now and say what you must do in Claude Code. Every
server (or the one named) is probed; a wrapped server whose shim gave up
after a crash loop (or is stuck restarting) is restarted once its command
works again. For servers Claude Code itself gave up on, heal names the
command to run in Claude Code: /mcp reconnect <name>.
Exits 1 when a server is still broken.`

func runHeal(ctx context.Context, env *Env, args []string) error {
	f, d, servers, err := check(env, "heal", args, "heal [flags] [server]", healHelp)
	if err != nil {
		return err
	}
	if len(servers) == 0 && !f.json {
		fmt.Fprintf(env.Stdout, "No MCP servers configured for %s.\n", d.Dir)
		return nil
	}
	reports := d.Check(ctx, servers)
	d.Heal(ctx, reports)
	printed := doctor.Redacted(reports)
	if f.json {
		writeJSON(env.Stdout, printed)
	} else {
		doctor.WriteText(env.Stdout, printed)
		doctor.WriteTodo(env.Stdout, printed)
	}
	for _, r := range reports {
		if r.Probe != nil && !r.Probe.OK {
			return &exitError{code: 1}
		}
	}
	return nil
}
