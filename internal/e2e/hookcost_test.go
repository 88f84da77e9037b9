package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The hook-cost table stands in docs/end-to-end.md between these markers.
const (
	costDoc   = "docs/end-to-end.md"
	costBegin = "<!-- BEGIN hook-cost -->\n"
	costEnd   = "<!-- END hook-cost -->\n"
	// costCalls MCP calls, one a turn, in one `-p` session.
	costCalls = 40
	costRuns  = 3
	// costTarget is issue 10's target: mcp-heal's session at most this
	// many times the floor plugin's.
	costTarget = 1.10
)

// costSetup is one column of the hook-cost table.
type costSetup struct {
	name  string
	setup func(t *testing.T, s *session)
}

var costSetups = []costSetup{
	{"no plugin", func(*testing.T, *session) {}},
	{"floor plugin (one blocking PreToolUse running /bin/true)", func(t *testing.T, s *session) { s.plugin = floorPlugin(t) }},
	{"mcp-heal plugin", func(t *testing.T, s *session) { s.withPlugin() }},
}

// floorPlugin is the cheapest plugin that checks MCP calls: one blocking
// PreToolUse hook on mcp__.* that runs /bin/true. Claude Code charges a
// price of its own for any blocking hook; this is that price.
func floorPlugin(t *testing.T) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	writeJSONFile(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), map[string]any{"name": "floor", "version": "1.0.0"})
	writeJSONFile(t, filepath.Join(dir, "hooks", "hooks.json"), map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "mcp__.*", "hooks": []any{map[string]any{"type": "command", "command": "/bin/true"}}}},
	}})
	return dir
}

// costSession runs one `-p` session of costCalls echo calls to an
// unwrapped example server (the shim is not what is measured) and returns
// its wall time.
func costSession(t *testing.T, c costSetup) time.Duration {
	script := make([]Turn, 0, costCalls+1)
	for i := range costCalls {
		script = append(script, Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": fmt.Sprint(i)})}})
	}
	script = append(script, Turn{Text: "Done."})
	s := newSession(t, script...)
	c.setup(t, s)
	s.addExample("ex", false, nil)
	r := s.runP([]string{"Echo forty times."}, 5*time.Minute)
	if r.Err != nil {
		t.Fatalf("%s: claude -p: %v\n%s", c.name, r.Err, r.Stderr)
	}
	for i := range costCalls {
		wantOK(t, fmt.Sprintf("%s: call %d", c.name, i), mustResult(t, s.model, i+1, ToolUseID(i, 0)), fmt.Sprint(i))
	}
	return r.End.Sub(r.Start)
}

// TestHookCost, with -report, measures what the hooks cost per MCP call
// with the real Claude Code: costRuns sessions of costCalls calls each for
// no plugin, the floor plugin and mcp-heal, run in turn so that load hits
// all three alike, and writes the medians and ratios into
// docs/end-to-end.md:
//
//	go test ./internal/e2e -run TestHookCost -v -args -report
//
// Without -report it checks the doc has the table with a row per setup.
func TestHookCost(t *testing.T) {
	path := filepath.Join(testenv.ModuleRoot(t), costDoc)
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(costBegin)), bytes.Index(doc, []byte(costEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", costDoc, strings.TrimSpace(costBegin), strings.TrimSpace(costEnd))
	}
	if !*reportFlag {
		table := string(doc[i+len(costBegin) : j])
		for _, c := range costSetups {
			if !strings.Contains(table, "| "+c.name+" | ") {
				t.Errorf("%s hook-cost table lacks the row %q: run go test ./internal/e2e -run TestHookCost -args -report", costDoc, c.name)
			}
		}
		return
	}
	times := make([][]time.Duration, len(costSetups))
	for run := range costRuns {
		for k, c := range costSetups {
			d := costSession(t, c)
			t.Logf("run %d, %s: %v", run+1, c.name, d)
			times[k] = append(times[k], d)
		}
	}
	med := make([]time.Duration, len(costSetups))
	for k := range times {
		sort.Slice(times[k], func(a, b int) bool { return times[k][a] < times[k][b] })
		med[k] = times[k][len(times[k])/2]
	}
	none, floor := med[0], med[1]
	var b strings.Builder
	fmt.Fprintf(&b, "| setup (%d MCP calls in one `-p` session, median of %d) | session | per call over no plugin | vs no plugin | vs floor |\n|---|---|---|---|---|\n", costCalls, costRuns)
	for k, c := range costSetups {
		fmt.Fprintf(&b, "| %s | %.2f s | %.1f ms | %.2f× | %.2f× |\n", c.name, med[k].Seconds(),
			float64(med[k]-none)/float64(time.Millisecond)/costCalls, float64(med[k])/float64(none), float64(med[k])/float64(floor))
	}
	fmt.Fprint(os.Stdout, "\n"+b.String())
	if t.Failed() {
		return // a session whose calls failed measures nothing
	}
	out := append(append(append([]byte{}, doc[:i+len(costBegin)]...), b.String()...), doc[j:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if ratio := float64(med[2]) / float64(floor); ratio > costTarget {
		t.Errorf("mcp-heal's session is %.2f× the floor plugin's, want at most %.2f× (the table is written all the same)", ratio, costTarget)
	}
}
