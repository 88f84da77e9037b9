package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mcp-heal/mcp-heal/internal/demo"
)

const demoHelp = `
Shows the shim at work with nothing to install: runs the built-in example MCP
server behind 'mcp-heal shim', drives a burst of tool calls at it, and kills
the server in the middle of each burst three ways (SIGKILL, a hang, a crash
loop that recovers). The same script is run against the server directly, and
the report puts both side by side: calls answered, failed, lost (never
answered), re-sent, and how long recovery took. Takes about 10 seconds.
`

func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("demo")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	calls := fs.Int("calls", 24, "calls per failure")
	workers := fs.Int("workers", 4, "concurrent clients")
	quiet := fs.BoolP("quiet", "q", false, "no progress lines on stderr")
	if err := parseFlags(env, fs, "demo [flags]", demoHelp, args); err != nil {
		return err
	}
	if *calls <= 0 || *workers <= 0 {
		return &usageError{msg: fmt.Sprintf("--calls and --workers must be 1 or more (got %d and %d)", *calls, *workers), hint: "run 'mcp-heal demo --help'"}
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("unexpected argument %q", fs.Arg(0)), hint: "run 'mcp-heal demo --help'"}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary: %w", err)
	}
	o := demo.Options{Binary: self, Calls: *calls, Workers: *workers}
	if !*quiet {
		o.Progress = func(s string) { fmt.Fprintf(env.Stderr, "mcp-heal demo: %s\n", s) }
	}
	rep, err := demo.Run(ctx, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(env.Stdout)
	}
	return rep.WriteTable(env.Stdout)
}
