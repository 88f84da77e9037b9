// Package logview reads the lifecycle and traffic logs shims write (JSON
// lines under the state directory) for `mcp-heal logs`: the last lines of
// a log, and each event as one line a person can read.
package logview

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Human turns one JSON log line into "15:04:05.000 event key=value
// ...": the local time, the event (or the traffic direction), then the
// other fields in name order. A line that is not a JSON object is kept.
// Either way it is quoted by the one rule for text that came from a
// server (text.Safe): logs hold servers' stderr and errors.
func Human(line string) string {
	return text.Safe(human(line))
}

func human(line string) string {
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

// JSON is line when it is valid JSON, else line as a JSON string: every
// line `logs --json` prints is JSON, whatever the file holds.
func JSON(line string) string {
	if json.Valid([]byte(line)) {
		return line
	}
	b, _ := json.Marshal(line)
	return string(b)
}

// maxRead bounds what Last reads of a log: twice the largest a log grows
// before it is rotated (state.MaxTrafficBytes), so a whole current log is
// read, and a file planted there costs no more.
const maxRead = 2 * state.MaxTrafficBytes

// Last returns the last n lines of path (all when n <= 0), read the one
// way mcp-heal reads a log's tail (state.ReadTail: no link, no FIFO,
// bounded).
func Last(path string, n int) ([]string, error) {
	b, err := state.ReadTail(path, maxRead, time.Time{})
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) == 0 {
		lines = nil
	}
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}
