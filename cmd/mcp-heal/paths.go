package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/mcp-heal/mcp-heal/internal/paths"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

const pathsHelp = `
Print where mcp-heal keeps its state, attention markers, data, the stable
binary wrapped servers run, sockets and the plugin's cache (the directory
the hooks use; empty until a session started with the plugin), one
name=path a line: adrg/xdg's answer, which the plugin's launcher records and
reads. --goos computes them for another platform.
`

func runPaths(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("paths")
	goos := fs.String("goos", runtime.GOOS, "the platform to compute the paths for")
	if err := parseFlags(env, fs, "paths", pathsHelp, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("paths takes no arguments, got %q", fs.Arg(0))}
	}
	p := paths.Current()
	if *goos != runtime.GOOS {
		p = paths.For(*goos, env.Getenv)
	}
	if p.PluginData == "" && *goos == runtime.GOOS {
		// Run from a command's `!` line or the Bash tool, which have no
		// CLAUDE_PLUGIN_DATA: the directory the hooks recorded.
		p.PluginData = state.PluginData()
	}
	for _, f := range p.Fields() {
		fmt.Fprintf(env.Stdout, "%s=%s\n", f[0], f[1])
	}
	return nil
}
