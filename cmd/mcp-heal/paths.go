package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/mcp-heal/mcp-heal/internal/paths"
)

const pathsHelp = `
Print where mcp-heal keeps its state, attention markers, data, the stable
binary wrapped servers run, sockets and the plugin's cache, one name=path a
line. --goos computes them for another platform (the plugin's launcher is
checked against this).
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
	for _, f := range paths.For(*goos, env.Getenv).Fields() {
		fmt.Fprintf(env.Stdout, "%s=%s\n", f[0], f[1])
	}
	return nil
}
