package main

import (
	"context"

	"github.com/mcp-heal/mcp-heal/internal/hook"
)

const hookHelp = `Handle one Claude Code hook event. The payload is read from stdin; the
reply (one JSON object, or nothing) is written to stdout. Events:
SessionStart, PreToolUse, PostToolUseFailure (any other event is ignored).

A hook never fails: whatever goes wrong is logged to the state directory
(hook.log) and the hook exits 0 without output, so the tool call goes on.`

func runHook(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("hook")
	if err := parseFlags(env, fs, "hook <event>", hookHelp, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "hook needs exactly one event name", hint: "run 'mcp-heal hook --help'"}
	}
	hook.Main(ctx, fs.Arg(0), env.Stdin, env.Stdout, env.Getenv)
	return nil
}
