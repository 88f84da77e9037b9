package main

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/monitor"
)

const monitorHelp = `Watch the MCP servers of this Claude Code session (the plugin's monitor,
which Claude Code starts for each interactive session) and print one line
for each change the model should know of: a server restarted (its state
is gone), crash-looping or unable to start (what to run), working again.
A healthy session gets no line. It ends with the session, and once its
plugin is uninstalled (its version directory, $MCP_HEAL_PLUGIN_ROOT from the
launcher, gone or marked .orphaned_at, or its binary gone).

Outside a Claude Code session (no CLAUDE_CODE_SESSION_ID nor CLAUDE_PID),
and in a headless one (claude -p, which does not run monitors), it prints
nothing and exits.`

func runMonitor(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("monitor")
	if err := parseFlags(env, fs, "monitor", monitorHelp, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return &usageError{msg: "monitor takes no arguments", hint: "run 'mcp-heal monitor --help'"}
	}
	session := env.Getenv("CLAUDE_CODE_SESSION_ID")
	pid, _ := strconv.Atoi(env.Getenv("CLAUDE_PID"))
	if session == "" && pid <= 0 || health.Headless(env.Getenv) {
		return nil
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	// The launcher names the plugin version it runs from: once that is
	// uninstalled, the monitor ends (Claude Code would keep it to /exit).
	exe, _ := os.Executable()
	return monitor.Run(ctx, monitor.Options{Session: session, ClaudePID: pid, Out: env.Stdout, PluginRoot: env.Getenv(monitor.EnvPluginRoot), Exe: exe})
}
