//go:build unix

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// mode is how a scenario is set up.
type mode int

const (
	// alone is Claude Code on its own: no plugin, servers as the user
	// configured them. Only the -report run uses it, as the baseline.
	alone mode = iota
	// hooksOnly loads the plugin but leaves servers unwrapped: what the
	// hooks can explain and heal without the shim.
	hooksOnly
	// healed loads the plugin and wraps servers with `mcp-heal shim`.
	healed
)

func (m mode) String() string {
	return [...]string{"Claude Code alone", "hooks only", "with mcp-heal"}[m]
}

func (m mode) plugin() bool { return m != alone }
func (m mode) wrap() bool   { return m == healed }

// aloneAndHealed is a scenario test that needs the full suite (needs
// says what for: testenv.NeedsFull) and runs in parallel: it runs f as two
// parallel subtests, one per mode: Claude Code alone (the baseline) and
// with mcp-heal.
func aloneAndHealed(t *testing.T, needs string, f func(t *testing.T, m mode)) {
	testenv.NeedsFull(t, needs)
	t.Parallel()
	for _, m := range []mode{alone, healed} {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			f(t, m)
		})
	}
}

// outcome is what one scenario run measured, for the report.
type outcome struct {
	Calls    int           // tool calls from the first one the fault hit
	Failed   int           // of those, how many the model saw fail
	Recovery time.Duration // first affected call's start -> end of the first success from there; <0 never
	Note     string
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

// measure computes the outcome of calls from the first call with id
// `from` on.
func measure(calls []Call, from string) outcome {
	o := outcome{Recovery: -1}
	var start time.Time
	for _, c := range calls {
		if start.IsZero() {
			if c.ID != from {
				continue
			}
			start = c.Start
		}
		o.Calls++
		if !c.OK() {
			o.Failed++
			continue
		}
		if o.Recovery < 0 {
			o.Recovery = c.End.Sub(start)
		}
	}
	return o
}

// logCalls logs what the model saw for every call, and returns the
// outcome from the call with id from on.
func logCalls(t *testing.T, m *Model, from string) outcome {
	t.Helper()
	calls := m.Calls()
	for _, c := range calls {
		t.Logf("call %s %s: %v ok=%v %q", c.ID, c.Name, c.Duration().Round(time.Millisecond), c.OK(), truncate(c.Result.Text, 300))
	}
	for _, r := range m.Main() {
		for name, ctx := range r.HookContext() {
			t.Logf("turn %d: %s hook context: %q", r.Turn, name, truncate(ctx, 400))
		}
	}
	return measure(calls, from)
}

// addStdio configures a stdio server, wrapped with the shim when wrap.
func (s *session) addStdio(name string, wrap bool, shimFlags []string, command string, args ...string) {
	if wrap {
		sargs := append([]string{"shim", "--name", name}, shimFlags...)
		sargs = append(sargs, "--")
		sargs = append(sargs, command)
		args = append(sargs, args...)
		command = testenv.Binary(s.t)
	}
	s.servers[name] = map[string]any{"command": command, "args": args}
}

// addExample configures `mcp-heal example-server` with flags.
func (s *session) addExample(name string, wrap bool, shimFlags []string, flags ...string) {
	s.addStdio(name, wrap, shimFlags, testenv.Binary(s.t), append([]string{"example-server"}, flags...)...)
}

// addNodeScript configures a Node script of testdata as a stdio server.
func (s *session) addNodeScript(name string, wrap bool, shimFlags []string, script string, args ...string) {
	path, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		s.t.Fatal(err)
	}
	s.addStdio(name, wrap, shimFlags, testenv.Node(s.t), append([]string{path}, args...)...)
}

// newModeSession is a session set up for m.
func newModeSession(t *testing.T, m mode, script ...Turn) *session {
	s := newSession(t, script...)
	if m.plugin() {
		s.withPlugin()
	}
	return s
}

// call is a tool_use of the example server's tools.
func call(server, tool string, input map[string]any) ToolUse {
	return ToolUse{Name: "mcp__" + server + "__" + tool, Input: input}
}

// exampleMatch matches the example server process (not its shim).
var exampleMatch = serverMatch("example-server")

// mustResult returns the tool_result the model saw in the request answered
// with turn for the call id, failing the test when there is none.
func mustResult(t *testing.T, m *Model, turn int, id string) ToolResult {
	t.Helper()
	req := m.ForTurn(turn)
	if req == nil {
		t.Fatalf("the model was never asked for turn %d", turn)
	}
	tr, ok := req.ToolResult(id)
	if !ok {
		t.Fatalf("turn %d: no tool_result for %s; tail: %+v", turn, id, req.Tail())
	}
	return tr
}

// wantOK fails unless tr is a successful result containing want.
func wantOK(t *testing.T, what string, tr ToolResult, want string) {
	t.Helper()
	if tr.IsError || !strings.Contains(tr.Text, want) {
		t.Errorf("%s: the model saw is_error=%v %q, want a success containing %q", what, tr.IsError, tr.Text, want)
	}
}

// hookFailures returns hook runs that did not succeed.
func hookFailures(r *run) []hookRun {
	var bad []hookRun
	for _, h := range r.hooks() {
		if h.Outcome != "success" || h.ExitCode != 0 {
			bad = append(bad, h)
		}
	}
	return bad
}

// wantHooksRan checks that the plugin's hooks ran for the session's MCP
// calls and all succeeded.
func wantHooksRan(t *testing.T, r *run, events ...string) {
	t.Helper()
	seen := map[string]int{}
	for _, h := range r.hooks() {
		seen[h.Event]++
	}
	for _, e := range events {
		if seen[e] == 0 {
			t.Errorf("no %s hook ran (hook runs: %v)", e, seen)
		}
	}
	for _, h := range hookFailures(r) {
		t.Errorf("hook %s failed: exit %d outcome %s stderr %q", h.Name, h.ExitCode, h.Outcome, h.Stderr)
	}
}

func dataFile(s *session, name string) string { return filepath.Join(s.home, name) }
