package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
)

// runGuardian is the hidden `mcp-heal guardian`: the shim re-executes its
// own binary with the control socket as fd 3 (see internal/guardian).
func runGuardian(_ context.Context, env *Env, _ []string) error {
	level := slog.LevelWarn
	if env.Getenv("MCP_HEAL_DEBUG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})).With("guardian", os.Getpid())
	return guardian.Serve(os.NewFile(3, "control"), log)
}
