package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mcp-heal/mcp-heal/internal/logview"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

const logsHelp = `Print the lifecycle log a server's shim writes (starts, exits, restarts,
backoff, failures), or with --traffic its traffic log (when the shim was
started with traffic logging), one event a line in local time. With --json,
the log's own JSON lines, for scripts. The server name is the one Claude
Code uses.`

func runLogs(ctx context.Context, env *Env, args []string) error {
	fl := newFlags("logs")
	traffic := fl.Bool("traffic", false, "print the traffic log instead")
	n := fl.IntP("lines", "n", 100, "print the last `N` lines (0: all)")
	asJSON := fl.Bool("json", false, "print the log's JSON lines (any other line as a JSON string)")
	if err := parseFlags(env, fl, "logs [flags] <server>", logsHelp, args); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return &usageError{msg: "logs needs one server name", hint: "run 'mcp-heal status' for the names"}
	}
	if *n < 0 {
		return &usageError{msg: fmt.Sprintf("--lines must be 0 (all) or more, not %d", *n)}
	}
	server := fl.Arg(0)
	path := state.LogPath(server)
	if *traffic {
		path = state.TrafficLogPath(server)
	}
	lines, err := logview.Last(path, *n)
	if errors.Is(err, fs.ErrNotExist) {
		what, hint := "lifecycle log", "run 'mcp-heal wrap "+text.Name(server)+"': only wrapped servers have one"
		if *traffic {
			what, hint = "traffic log", "read 'mcp-heal shim --help' to turn it on: traffic logging is opt-in"
		}
		return &usageError{msg: fmt.Sprintf("no %s for %s yet (%s)", what, text.QuotedName(server), path), hint: hint}
	}
	if err != nil {
		return err
	}
	for _, l := range lines {
		// Logs are redacted as written; lines written by an older
		// version were not, and /mcp-heal logs reaches the model.
		l = redact.String(l)
		if *asJSON {
			l = logview.JSON(l)
		} else {
			l = logview.Human(l)
		}
		fmt.Fprintln(env.Stdout, l)
	}
	return nil
}
