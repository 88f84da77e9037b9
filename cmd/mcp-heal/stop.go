package main

import (
	"context"
	"fmt"

	"github.com/mcp-heal/mcp-heal/internal/keep"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

const stopSynopsis = "stop NAME|--all"

const stopDescription = `
Stop the kept server NAME (one started with shim --keep) now, or with --all
every kept server: its guardian stops it (close its stdin, SIGTERM,
SIGKILL) and everything it started. A session still attached to it gets a
fresh server on its next call.`

func runStop(_ context.Context, env *Env, args []string) error {
	fs := newFlags("stop")
	all := fs.Bool("all", false, "every kept server")
	if err := parseFlags(env, fs, stopSynopsis, stopDescription, args); err != nil {
		return err
	}
	if *all && fs.NArg() == 0 {
		n, err := keep.StopNamed("", func(pid int) { fmt.Fprintf(env.Stdout, "stopped a kept server (pid %d)\n", pid) })
		if err == nil && n == 0 {
			fmt.Fprintln(env.Stdout, "no kept server is running")
		}
		return err
	}
	if *all || fs.NArg() != 1 {
		return &usageError{msg: "stop takes the name of one kept server, or --all", hint: "run 'mcp-heal stop NAME', or 'mcp-heal stop --all'"}
	}
	name := fs.Arg(0)
	n, err := keep.StopNamed(name, func(pid int) { fmt.Fprintf(env.Stdout, "stopped the kept server %s (pid %d)\n", text.Name(name), pid) })
	if err == nil && n == 0 {
		return &usageError{msg: fmt.Sprintf("no kept server named %s is running", text.QuotedName(name)), hint: "run 'mcp-heal status': it lists the kept servers"}
	}
	return err
}
