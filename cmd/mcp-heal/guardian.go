package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/keep"
)

// runGuardian is the hidden `mcp-heal guardian`: the shim re-executes its
// own binary with the control socket (or, with --keep, the kept server's
// listening socket) as fd 3 (see internal/guardian and internal/keep).
func runGuardian(_ context.Context, env *Env, args []string) error {
	fs := newFlags("guardian")
	window := fs.Duration("keep", 0, "")
	identity := fs.String("identity", "", "")
	slot := fs.String("slot", "", "")
	name := fs.String("name", "", "")
	if err := fs.Parse(args); err != nil {
		return &usageError{msg: err.Error()}
	}
	level := slog.LevelWarn
	if env.Getenv("MCP_HEAL_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})).With("guardian", os.Getpid())
	if *window > 0 {
		return keep.Serve(*name, *identity, *slot, *window, log)
	}
	return guardian.Serve(os.NewFile(3, "control"), log)
}
