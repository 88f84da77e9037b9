//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	costRuns  = 8
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
	{"floor plugin (one blocking PreToolUse running /bin/true)", func(t *testing.T, s *session) { s.plugin = floorPlugin(t, nil) }},
	{"mcp-heal plugin", func(t *testing.T, s *session) { s.withPlugin(); s.plugin = pluginFiles(t) }},
	// Why mcp-heal has no hook after a call: what one more hook, after
	// every batch, costs, blocking or not.
	{"floor plugin + a blocking PostToolBatch running /bin/true", func(t *testing.T, s *session) { s.plugin = floorPlugin(t, batchHook(false)) }},
	{"floor plugin + an async PostToolBatch running /bin/true", func(t *testing.T, s *session) { s.plugin = floorPlugin(t, batchHook(true)) }},
}

// batchHook is a PostToolBatch hook group running /bin/true.
func batchHook(async bool) map[string]any {
	h := map[string]any{"type": "command", "command": "/bin/true", "args": []any{}}
	if async {
		h["async"] = true
	}
	return map[string]any{"PostToolBatch": []any{map[string]any{"hooks": []any{h}}}}
}

// pluginFiles copies the plugin's own files (manifest, hooks, command,
// launcher), as a release lays them out, out of the repository: Claude
// Code is then measured loading the plugin users install, not a source
// tree of thousands of files. The binary comes from MCP_HEAL_BIN.
func pluginFiles(t *testing.T) string {
	dir := t.TempDir()
	root := testenv.ModuleRoot(t)
	for _, d := range []string{".claude-plugin", "hooks", "commands", "plugin"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(root, d), dir).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v %s", d, err, out)
		}
	}
	return dir
}

// floorPlugin is the cheapest plugin that checks MCP calls: one blocking
// PreToolUse hook on mcp__.* that runs /bin/true (and the hooks of more,
// when not nil). Claude Code charges a price of its own for any blocking
// hook; this is that price. Its hooks are in the exec form (command and
// args), as mcp-heal's are: a command without args runs through sh -c
// (measured: the hook's parent is sh, with args Claude Code itself), which
// would make the floor a shell and /bin/true, dearer than mcp-heal's
// launcher alone.
func floorPlugin(t *testing.T, more map[string]any) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	writeJSONFile(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), map[string]any{"name": "floor", "version": "1.0.0"})
	hooks := map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "mcp__.*", "hooks": []any{map[string]any{"type": "command", "command": "/bin/true", "args": []any{}}}}},
	}
	for k, v := range more {
		hooks[k] = v
	}
	writeJSONFile(t, filepath.Join(dir, "hooks", "hooks.json"), map[string]any{"hooks": hooks})
	return dir
}

// costRun is one measured session.
type costRun struct {
	session time.Duration   // claude -p from start to exit
	calls   []time.Duration // each call from the answer asking for it to the request carrying its result (hooks included)
}

// costSession runs one `-p` session of costCalls echo calls to an
// unwrapped example server (the shim is not what is measured).
func costSession(t *testing.T, c costSetup) costRun {
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
	out := costRun{session: r.End.Sub(r.Start)}
	for i, call := range s.model.Calls() {
		wantOK(t, fmt.Sprintf("%s: call %d", c.name, i), call.Result, fmt.Sprint(i))
		out.calls = append(out.calls, call.Duration())
	}
	if len(out.calls) != costCalls {
		t.Fatalf("%s: %d calls made, want %d", c.name, len(out.calls), costCalls)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestHookCost, with -report, measures what the hooks cost per MCP call
// with the real Claude Code: costRuns sessions of costCalls calls each for
// no plugin, the floor plugin and mcp-heal, run in turn so that load hits
// all three alike, and writes the medians, the fastest quarter of the
// calls (what a call costs when the machine's load does not get in the
// way; the ratios and the target use it) into docs/end-to-end.md:
//
//	go test ./internal/e2e -run TestHookCost -v -args -report
//
// Without -report it checks the doc has the table with a row per setup.
func TestHookCost(t *testing.T) {
	doc := readDocTable(t, costDoc, costBegin, costEnd)
	if !*reportFlag {
		table := doc.text()
		for _, c := range costSetups {
			if !strings.Contains(table, "| "+c.name+" | ") {
				t.Errorf("%s hook-cost table lacks the row %q: run go test ./internal/e2e -run TestHookCost -args -report", costDoc, c.name)
			}
		}
		return
	}
	sessions := make([][]time.Duration, len(costSetups))
	calls := make([][]time.Duration, len(costSetups))
	for run := range costRuns {
		for k, c := range costSetups {
			r := costSession(t, c)
			t.Logf("run %d, %s: session %v, median call %v", run+1, c.name, r.session, testenv.Median(r.calls))
			sessions[k] = append(sessions[k], r.session)
			calls[k] = append(calls[k], r.calls...)
		}
	}
	// The fastest quarter of the calls is what a call costs when nothing
	// else on the machine gets in its way; the median shows the load.
	fast := make([]time.Duration, len(costSetups))
	for k := range costSetups {
		fast[k] = testenv.Quantile(calls[k], 0.25)
	}
	none, floor := fast[0], fast[1]
	var b strings.Builder
	// The machine's load is part of the figures: on a busy machine the
	// spread between runs is larger than what the hooks cost.
	load, _ := os.ReadFile("/proc/loadavg")
	la := strings.Fields(string(load))
	fmt.Fprintf(&b, "Measured %s, %d CPUs, load average %s.\n\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), strings.Join(la[:min(3, len(la))], " "))
	fmt.Fprintf(&b, "| setup (%d MCP calls in one `-p` session, %d sessions each) | session (median) | session vs no plugin | session vs floor | one call (median) | one call (fastest quarter) | call vs no plugin | call vs floor |\n|---|---|---|---|---|---|---|---|\n", costCalls, costRuns)
	sNone, sFloor := testenv.Median(sessions[0]), testenv.Median(sessions[1])
	for k, c := range costSetups {
		sk := testenv.Median(sessions[k])
		fmt.Fprintf(&b, "| %s | %.2f s | %.2f× | %.2f× | %.1f ms | %.1f ms | %+.1f ms (%.2f×) | %+.1f ms (%.2f×) |\n", c.name, sk.Seconds(),
			float64(sk)/float64(sNone), float64(sk)/float64(sFloor), ms(testenv.Median(calls[k])), ms(fast[k]),
			ms(fast[k]-none), float64(fast[k])/float64(none), ms(fast[k]-floor), float64(fast[k])/float64(floor))
	}
	if !doc.publish(t, b.String()) {
		return // a session whose calls failed measures nothing
	}
	if ratio := float64(fast[2]) / float64(floor); ratio > costTarget {
		t.Errorf("an MCP call with mcp-heal takes %.2f× what it takes with the floor plugin, want at most %.2f× (the table is written all the same)", ratio, costTarget)
	}
}

// docTable is a table the -report runs generate in a doc: the text
// between two marker lines.
type docTable struct {
	path       string
	doc        []byte
	begin, end int // the table's text is doc[begin:end]
}

// readDocTable reads the doc at rel (a path from the module root) and
// finds its table between the lines begin and end; the test fails when
// the doc has none.
func readDocTable(t *testing.T, rel, begin, end string) *docTable {
	t.Helper()
	path := filepath.Join(testenv.ModuleRoot(t), filepath.FromSlash(rel))
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", rel, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	return &docTable{path: path, doc: doc, begin: i + len(begin), end: j}
}

// text is the table as the doc has it.
func (d *docTable) text() string { return string(d.doc[d.begin:d.end]) }

// publish prints table and, unless the test failed (its figures then go
// nowhere), writes it into the doc in place of the old one; it reports
// whether it did.
func (d *docTable) publish(t *testing.T, table string) bool {
	t.Helper()
	fmt.Fprint(os.Stdout, "\n"+table)
	if t.Failed() {
		return false
	}
	out := append(append(append([]byte{}, d.doc[:d.begin]...), table...), d.doc[d.end:]...)
	if err := os.WriteFile(d.path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return true
}
