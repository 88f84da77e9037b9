package main

import (
	"context"
	"fmt"

	"github.com/mcp-heal/mcp-heal/internal/keep"
)

const stopSynopsis = "stop NAME"

const stopDescription = `
Stop the kept server NAME (one started with shim --keep) now: its guardian
stops it (close its stdin, SIGTERM, SIGKILL) and everything it started. A
session still attached to it gets a fresh server on its next call.`

func runStop(_ context.Context, env *Env, args []string) error {
	fs := newFlags("stop")
	if err := parseFlags(env, fs, stopSynopsis, stopDescription, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "stop takes the name of one kept server", hint: "mcp-heal stop NAME"}
	}
	name := fs.Arg(0)
	n, err := keep.StopNamed(name, func(pid int) { fmt.Fprintf(env.Stdout, "stopped the kept server %s (pid %d)\n", name, pid) })
	if err == nil && n == 0 {
		return &usageError{msg: fmt.Sprintf("no kept server named %q is running", name), hint: "mcp-heal status lists the kept servers"}
	}
	return err
}
