package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
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
	asJSON := fl.Bool("json", false, "print the log's JSON lines as they are")
	if err := parseFlags(env, fl, "logs [flags] <server>", logsHelp, args); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return &usageError{msg: "logs needs one server name", hint: "see 'mcp-heal status' for the names"}
	}
	if *n < 0 {
		return &usageError{msg: fmt.Sprintf("--lines must be 0 (all) or more, not %d", *n)}
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
	for _, l := range lines {
		// Logs are redacted as written; lines written by an older
		// version were not, and /mcp-heal logs reaches the model.
		l = redact.String(l)
		if !*asJSON {
			l = humanLine(l)
		}
		fmt.Fprintln(env.Stdout, l)
	}
	return nil
}

// humanLine turns one JSON log line into "15:04:05.000 event key=value
// ...": the local time, the event (or the traffic direction), then the
// other fields in name order. A line that is not a JSON object is kept.
func humanLine(line string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return line
	}
	var b strings.Builder
	var ts string
	if json.Unmarshal(m["time"], &ts) == nil {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			b.WriteString(t.Local().Format("15:04:05.000"))
		}
	}
	for _, k := range []string{"event", "dir"} {
		var v string
		if json.Unmarshal(m[k], &v) == nil && v != "" {
			fmt.Fprintf(&b, " %s", v)
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		switch k {
		case "time", "event", "dir", "server":
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := string(m[k])
		var str string
		if json.Unmarshal(m[k], &str) == nil && str != "" && !strings.ContainsAny(str, " \t\"=") {
			v = str
		}
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	return strings.TrimSpace(b.String())
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
