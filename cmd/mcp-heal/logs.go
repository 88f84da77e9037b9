package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

const logsHelp = `Print the lifecycle log a server's shim writes (starts, exits, restarts,
backoff, failures), or with --traffic its traffic log (when the shim was
started with traffic logging). The server name is the one Claude Code uses.`

func runLogs(ctx context.Context, env *Env, args []string) error {
	fl := newFlags("logs")
	traffic := fl.Bool("traffic", false, "print the traffic log instead")
	n := fl.IntP("lines", "n", 100, "print the last `N` lines (0: all)")
	asJSON := fl.Bool("json", false, "print JSON: {server, path, lines}")
	if err := parseFlags(env, fl, "logs [flags] <server>", logsHelp, args); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return &usageError{msg: "logs needs one server name", hint: "see 'mcp-heal status' for the names"}
	}
	server := fl.Arg(0)
	path := state.LogPath(server)
	if *traffic {
		path = state.TrafficLogPath(server)
	}
	lines, err := lastLines(path, *n)
	if errors.Is(err, fs.ErrNotExist) {
		what, hint := "lifecycle log", "only wrapped servers have one: 'mcp-heal wrap "+server+"'"
		if *traffic {
			what, hint = "traffic log", "traffic logging is opt-in: see 'mcp-heal shim --help'"
		}
		return &usageError{msg: fmt.Sprintf("no %s for %q yet (%s)", what, server, path), hint: hint}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		if lines == nil {
			lines = []string{}
		}
		writeJSON(env.Stdout, map[string]any{"server": server, "path": path, "lines": lines})
		return nil
	}
	for _, l := range lines {
		fmt.Fprintln(env.Stdout, l)
	}
	return nil
}

// lastLines returns the last n lines of path (all when n <= 0).
func lastLines(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if n > 0 && len(lines) > 2*n {
			lines = append(lines[:0], lines[len(lines)-n:]...)
		}
	}
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, sc.Err()
}
