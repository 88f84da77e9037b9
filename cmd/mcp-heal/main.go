// Command mcp-heal keeps MCP servers working for Claude Code: a
// self-healing shim in front of stdio and remote servers, the plugin's hooks,
// and the /mcp-heal status, doctor, heal, wrap, unwrap, logs and stop commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcp-heal/mcp-heal/internal/cli"
	"github.com/mcp-heal/mcp-heal/internal/health"
)

// Env is the process's I/O, passed to every subcommand so tests can drive
// them without globals.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// usageError is a mistake in the command line: exit 2.
type usageError struct{ msg, hint string }

func (e *usageError) Error() string { return e.msg }

// exitError carries an exit code chosen by a subcommand (e.g. doctor's 1
// when it found problems) after it has printed its own report.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

var commands = []command{
	{"shim", "run an MCP server (or bridge a remote one) and heal its failures", runShim},
	{"hook", "handle one Claude Code hook event (JSON on stdin)", runHook},
	{"monitor", "tell this Claude Code session's model of its servers' changes, one line each", runMonitor},
	{"status", "show every MCP server, its shim and recent incidents", runStatus},
	{"doctor", "probe servers and explain what is wrong", runDoctor},
	{"heal", "fix what can be fixed now and say what the user must do", runHeal},
	{"wrap", "make Claude Code launch servers through mcp-heal shim", runWrap},
	{"unwrap", "undo wrap", runUnwrap},
	{"logs", "print a server's lifecycle (and traffic) log", runLogs},
	{"statusline", "print this session's MCP health for Claude Code's status line", runStatusline},
	{"stop", "stop a kept server (shim --keep) now", runStop},
	{"demo", "show the shim healing a server that crashes, hangs and crash-loops", runDemo},
	{"example-server", "run the built-in example MCP server on stdio", runExampleServer},
	{"paths", "print where mcp-heal keeps its files", runPaths},
	{"version", "print the version", runVersion},
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: mcp-heal <command> [flags] [args]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-15s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'mcp-heal <command> --help' for a command's flags.\n")
}

func main() {
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	os.Exit(run(context.Background(), env, os.Args[1:]))
}

func run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		usage(env.Stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "--help":
		usage(env.Stdout)
		return 0
	case "help":
		if len(args) == 1 {
			usage(env.Stdout)
			return 0
		}
		// `help wrap` is `wrap --help`.
		name, rest = args[1], []string{"--help"}
	case "-v", "--version":
		name = "version"
	case "guardian":
		// Hidden: only the shim runs it.
		return report(env, runGuardian(ctx, env, args[1:]))
	}
	for _, c := range commands {
		if c.name == name {
			return report(env, c.run(ctx, env, rest))
		}
	}
	hint := "run 'mcp-heal --help' for the list"
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	if near := cli.Closest(name, names); near != "" {
		hint = fmt.Sprintf("did you mean 'mcp-heal %s'?", near)
	}
	return report(env, &usageError{msg: fmt.Sprintf("unknown command %q", name), hint: hint})
}

// report prints err the house way and returns the exit code.
func report(env *Env, err error) int {
	if cue := (*cli.UsageError)(nil); errors.As(err, &cue) {
		err = &usageError{msg: cue.Msg, hint: cue.Hint} // a flag value an internal package refused
	}
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "mcp-heal: error: %s\n", ue.msg)
		if ue.hint != "" {
			fmt.Fprintf(env.Stderr, "mcp-heal: hint: %s\n", health.FromEnv(env.Getenv).Hint(ue.hint))
		}
		return 2
	default:
		fmt.Fprintf(env.Stderr, "mcp-heal: error: %s\n", strings.TrimSuffix(err.Error(), "."))
		return 1
	}
}

// newFlags and parseFlags are every subcommand's flag set and parsing
// (internal/cli): --help prints to stdout, a parse error is a usage error.
var newFlags = cli.NewFlags

func parseFlags(env *Env, fs *pflag.FlagSet, synopsis, description string, args []string) error {
	return cli.ParseFlags(env.Stdout, fs, synopsis, description, args)
}
