package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/mcp-heal/mcp-heal/internal/hook"
)

const hookHelp = `Handle one Claude Code hook event. The payload is read from stdin; the
reply (one JSON object, or nothing) is written to stdout. Events:
SessionStart, PreToolUse, PostToolUseFailure (any other event is ignored).

A hook never fails: whatever goes wrong is logged to the state directory
(hook.log) and the hook exits 0 without output, so the tool call goes on.`

func runHook(ctx context.Context, env *Env, args []string) (err error) {
	fs := newFlags("hook")
	if err := parseFlags(env, fs, "hook <event>", hookHelp, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "hook needs exactly one event name", hint: "run 'mcp-heal hook --help'"}
	}
	log := hook.NewLogger()
	// Handle recovers its own panics; this catches one anywhere else on
	// the hook's path (reading stdin, writing the reply). Go exits 2 on
	// an unrecovered panic, the one status that blocks a PreToolUse call.
	defer func() {
		if p := recover(); p != nil {
			log.Error("hook panicked", "event", fs.Arg(0), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = nil
		}
	}()
	payload, err := hook.ReadPayload(env.Stdin)
	if err != nil {
		log.Warn("reading hook stdin", "event", fs.Arg(0), "err", err)
		return nil
	}
	reply := hook.New(env.Getenv, log).Handle(ctx, fs.Arg(0), payload)
	if reply != nil {
		if _, err := env.Stdout.Write(reply); err != nil {
			log.Warn("writing hook reply", "err", err)
		}
	}
	return nil
}
