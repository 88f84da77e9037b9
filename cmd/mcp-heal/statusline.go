package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/statusline"
	"github.com/mcp-heal/mcp-heal/internal/statusline/setup"
)

const statuslineHelp = `
The command for Claude Code's statusLine setting: one short line of this
session's MCP health, e.g. "MCP 7/8 · memory restarted 2m ago", or "MCP 8/8
ok" when all is well. Claude Code runs it with its session's JSON on stdin;
it prints nothing when it has nothing to say or anything goes wrong, and
always exits 0. NO_COLOR turns its colours off.

Run in a terminal or as /mcp-heal statusline, it prints the settings lines
that show it; --install adds them to ~/.claude/settings.json when that file
sets no statusLine. A statusLine of your own is never replaced: it prints
a command that shows both instead.
`

func runStatusline(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("statusline")
	install := fs.Bool("install", false, "add the statusLine to ~/.claude/settings.json (when it sets none)")
	if err := parseFlags(env, fs, "statusline [--install]", statuslineHelp, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("statusline takes no arguments, got %q", fs.Arg(0)), hint: "run 'mcp-heal statusline --help'"}
	}
	// What Claude Code runs: the payload on a pipe.
	if f, ok := env.Stdin.(*os.File); !*install && ok && statusline.Wanted(f, env.Getenv) {
		statusline.Main(env.Stdin, env.Stdout, env.Getenv, time.Now)
		return nil
	}
	a := health.FromEnv(env.Getenv)
	home := env.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	path := setup.SettingsPath(home, env.Getenv("CLAUDE_CONFIG_DIR"))
	bin, err := claudecfg.DefaultShim()
	if err != nil {
		return err
	}
	command := setup.Command(bin)
	if *install {
		return installStatusline(env, path, command)
	}
	cur, err := setup.Current(path)
	if err != nil {
		return err
	}
	switch {
	case cur != nil && setup.Ours(cur.Command):
		fmt.Fprintf(env.Stdout, "Claude Code's status line shows this session's MCP health: it runs\n%s\n(the statusLine of %s).\n", indent(cur.Command), path)
	case cur != nil:
		combineAdvice(env, path, cur, command)
	default:
		fmt.Fprintf(env.Stdout, "Run %s to show this session's MCP health\nin Claude Code's status line, e.g. %q.\n", a.Cmd("statusline --install"), "MCP 7/8 · memory restarted 2m ago")
		fmt.Fprintf(env.Stdout, "It adds these lines to %s\n(or add them yourself, inside its outer { }):\n\n%s\n", path, indent(setup.Snippet(command)))
	}
	if s := env.Getenv("CLAUDE_CODE_SESSION_ID"); s != "" {
		// The session's shims by its id or its Claude Code (/clear
		// changes the id, not the servers): the status line's own rule.
		pid, _ := strconv.Atoi(env.Getenv("CLAUDE_PID"))
		recs, _ := state.FindSession(s, pid)
		if l := statusline.Line(recs, time.Now(), false); l != "" {
			fmt.Fprintf(env.Stdout, "\nThis session's line now: %s\n", l)
		} else {
			fmt.Fprintf(env.Stdout, "\nThis session's line is empty now: none of its servers runs through\nmcp-heal (%s wraps them).\n", a.Cmd("wrap --all"))
		}
	}
	return nil
}

func installStatusline(env *Env, path, command string) error {
	backup, cur, err := setup.Install(path, command)
	switch {
	case errors.Is(err, setup.ErrExists) && setup.Ours(cur.Command):
		fmt.Fprintf(env.Stdout, "%s already runs mcp-heal's status line; nothing was changed.\n", path)
		return nil
	case errors.Is(err, setup.ErrExists):
		combineAdvice(env, path, cur, command)
		return &exitError{code: 1}
	case err != nil:
		return err
	}
	fmt.Fprintf(env.Stdout, "Added the statusLine to %s", path)
	if backup != "" {
		fmt.Fprintf(env.Stdout, " (the file as it was: %s)", backup)
	}
	fmt.Fprintf(env.Stdout, ".\nClaude Code shows it from its next update; remove the statusLine member there to undo.\n")
	return nil
}

// combineAdvice says that the user's own statusLine stays, and how to
// show both.
func combineAdvice(env *Env, path string, cur *setup.Existing, command string) {
	if cur.Command == "" {
		fmt.Fprintf(env.Stdout, "Set the statusLine's command to show mcp-heal's line:\n%s\n", indent(command))
	} else {
		b, _ := json.Marshal(setup.Combined(cur.Command, command))
		fmt.Fprintf(env.Stdout, "To show yours and mcp-heal's, set its \"command\" to this JSON string:\n%s\n", indent(string(b)))
	}
	fmt.Fprintf(env.Stdout, "(%s sets a statusLine of your own,\nwhich mcp-heal does not replace:\n%s)\n", path, indent(cur.Raw))
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }
