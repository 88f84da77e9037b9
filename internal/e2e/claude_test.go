//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// session is one throwaway Claude Code setup: a HOME, a project directory,
// an MCP config, the stand-in model, and optionally the mcp-heal plugin.
type session struct {
	t       *testing.T
	claude  string
	home    string
	work    string
	model   *Model
	servers map[string]any
	plugin  string // --plugin-dir, "" for none
	// userScope puts servers in ~/.claude.json (user scope, where
	// `mcp-heal status` and `wrap` find them) instead of --mcp-config.
	userScope  bool
	configured bool         // ~/.claude.json written with the servers
	env        []string     // extra environment
	allow      []string     // extra permission allow rules (e.g. "Bash(mcp-heal:*)")
	pid        atomic.Int64 // the running claude process
	mu         sync.Mutex
	pgids      []int         // process groups to kill at cleanup
	pids       []int         // processes to kill at cleanup (servers the test stopped)
	timeout    time.Duration // of a -p run; 0: 3 minutes
}

// claudeCodeEnv picks the Claude Code release a session runs: unset, the
// pin (testenv.ClaudeCode); "2.1.332" (or the whole package spec), the
// newest release (testenv.ClaudeCode332). The full test run runs the
// scenarios once per release (.ci/run); tests that check a behaviour in
// both releases at once set the session's claude themselves.
const claudeCodeEnv = "MCP_HEAL_CLAUDE_CODE"

// claudeCodePackage is the npm package spec claudeCodeEnv names. A value
// naming no release the test run installs fails the test: a typo must not
// quietly test the pin again.
func claudeCodePackage(t *testing.T) string {
	t.Helper()
	v := os.Getenv(claudeCodeEnv)
	if v == "" {
		return testenv.ClaudeCode
	}
	for _, pkg := range claudeReleases {
		if v == pkg || "@anthropic-ai/claude-code@"+v == pkg {
			return pkg
		}
	}
	t.Fatalf("%s=%q names no Claude Code release the tests install (want %s or %s)", claudeCodeEnv, v, testenv.ClaudeCode, testenv.ClaudeCode332)
	return ""
}

func newSession(t *testing.T, script ...Turn) *session {
	t.Helper()
	m, err := NewModel(script...)
	if err != nil {
		t.Fatalf("start model: %v", err)
	}
	s := &session{
		t:       t,
		claude:  testenv.NPMBin(t, "claude", claudeCodePackage(t)),
		home:    t.TempDir(),
		model:   m,
		servers: map[string]any{},
	}
	s.work = filepath.Join(s.home, "project")
	for _, d := range []string{s.work, filepath.Join(s.home, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.writeClaudeJSON()
	t.Cleanup(func() {
		s.killAll()
		s.closeModel()
		if t.Failed() {
			s.logStateDir()
		}
	})
	return s
}

// logStateDir logs the tails of mcp-heal's lifecycle logs and the hook log
// of the session: what the shims and hooks did, for a failed test.
func (s *session) logStateDir() {
	dir := filepath.Join(s.stateDir(), "mcp-heal")
	paths, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	more, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		s.t.Logf("%s:\n%s", strings.TrimPrefix(p, s.home+"/"), b)
	}
}

// closeModel stops the stand-in model and reports its errors.
func (s *session) closeModel() {
	s.model.Close()
	if err := s.model.Err(); err != nil {
		s.t.Errorf("stand-in model: %v", err)
	}
}

// newConversation gives the next claude run of this HOME a fresh stand-in
// model with script: a new Claude Code session starts a new conversation.
func (s *session) newConversation(script ...Turn) {
	s.t.Helper()
	s.closeModel()
	m, err := NewModel(script...)
	if err != nil {
		s.t.Fatalf("start model: %v", err)
	}
	s.model = m
}

// writeClaudeJSON writes the user state that skips Claude Code's first-run
// dialogs (theme, onboarding, folder trust, the API key question) and,
// for userScope sessions, holds the servers.
func (s *session) writeClaudeJSON() {
	cfg := map[string]any{
		"mcpServers":                           s.servers,
		"hasCompletedOnboarding":               true,
		"lastOnboardingVersion":                "2.1.328",
		"theme":                                "dark",
		"hasAcknowledgedCostThreshold":         true,
		"hasSeenTasksHint":                     true,
		"autoUpdates":                          false,
		"shiftEnterKeyBindingInstalled":        true,
		"hasCompletedClaudeInChromeOnboarding": true,
		"customApiKeyResponses":                map[string]any{"approved": []string{"sk-fake"}, "rejected": []string{}},
		"projects": map[string]any{
			s.work: map[string]any{
				"hasTrustDialogAccepted":        true,
				"hasCompletedProjectOnboarding": true,
				"allowedTools":                  []string{},
			},
		},
	}
	writeJSONFile(s.t, filepath.Join(s.home, ".claude.json"), cfg)
}

// writeSettings allows every tool of the configured servers, keeping what
// else ~/.claude/settings.json holds (`claude plugin install` enables
// plugins there). Allow rules, unlike bypass mode, work as root and raise
// no first-run dialog.
func (s *session) writeSettings() {
	allow := []string{} // never null: Claude Code drops a settings file whose permissions.allow is null, enabled plugins and all
	for name := range s.servers {
		allow = append(allow, "mcp__"+name)
	}
	allow = append(allow, s.allow...)
	sort.Strings(allow)
	path := filepath.Join(s.home, ".claude", "settings.json")
	settings := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			s.t.Fatalf("%s: %v", path, err)
		}
	}
	// An explicit default mode and auto mode disabled keep interactive
	// sessions from offering auto mode, whose classifier would send side
	// requests of its own.
	settings["permissions"] = map[string]any{"allow": allow, "defaultMode": "default", "disableAutoMode": "disable"}
	writeJSONFile(s.t, path, settings)
}

// writeJSONFile replaces the file at path with v as JSON, whole: it is
// written beside it and renamed over it, so that a reader (Claude Code, or
// another session of the same HOME writing its settings) never reads it
// half-written.
func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(f.Name(), 0o644)
		}
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			os.Remove(f.Name())
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// readJSONFile decodes the JSON file at path into v; the test fails when
// it cannot.
func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// mcpHeal runs the test build of mcp-heal with args in the session's
// environment (its HOME and state dir) and returns its stdout.
func (s *session) mcpHeal(args ...string) ([]byte, error) {
	cmd := exec.Command(testenv.Binary(s.t), args...)
	cmd.Env = s.environ()
	cmd.Dir = s.work
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%w: %s", err, stderr.Bytes())
	}
	return out, err
}

// withPlugin loads the repository as the mcp-heal plugin (--plugin-dir)
// with MCP_HEAL_BIN pointing at the test build, so hooks do not build it.
func (s *session) withPlugin() *session {
	s.plugin = testenv.ModuleRoot(s.t)
	s.env = append(s.env, "MCP_HEAL_BIN="+testenv.Binary(s.t))
	return s
}

func (s *session) stateDir() string { return filepath.Join(s.home, ".local", "state") }

// environ is the environment claude runs in: a throwaway HOME and XDG
// dirs (shims, hooks and commands share the state dir through them), no
// traffic of its own, MCP tools loaded eagerly, and the Go caches of the
// real user so that a plugin build is warm.
func (s *session) environ() []string {
	env := []string{
		"HOME=" + s.home,
		"PATH=" + os.Getenv("PATH"),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"USER=e2e",
		"SHELL=/bin/bash",
		"ANTHROPIC_BASE_URL=" + s.model.URL,
		"ANTHROPIC_API_KEY=sk-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"ENABLE_TOOL_SEARCH=false",
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.home, ".local", "share"),
		"XDG_STATE_HOME=" + s.stateDir(),
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
	}
	env = append(env, testenv.GoEnv("GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY")...)
	return append(env, s.env...)
}

// mcpConfig writes the --mcp-config file.
func (s *session) mcpConfig() string {
	p := filepath.Join(s.home, "mcp.json")
	writeJSONFile(s.t, p, map[string]any{"mcpServers": s.servers})
	return p
}

func (s *session) baseArgs() []string {
	s.writeSettings()
	var args []string
	switch {
	case !s.userScope:
		args = []string{"--mcp-config", s.mcpConfig(), "--strict-mcp-config"}
	case !s.configured:
		s.writeClaudeJSON()
		s.configured = true
	}
	if s.plugin != "" {
		args = append(args, "--plugin-dir", s.plugin)
	}
	return args
}

// event is one stream-json line with its arrival time.
type event struct {
	At      time.Time
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Raw     json.RawMessage
}

// run is a finished `claude -p` session.
type run struct {
	Start, End time.Time
	Events     []event
	Stderr     string
	Err        error
}

// runP runs `claude -p` with stream-json output and waits for it. One
// prompt is passed as the argument; several are sent one by one on
// stdin (--input-format stream-json), each once the previous one's result
// arrived, so that they share one session (a slash command after a
// failure, say).
func (s *session) runP(prompts []string, timeout time.Duration) *run {
	s.t.Helper()
	args := []string{"-p"}
	if len(prompts) == 1 {
		args = append(args, prompts[0])
	} else {
		args = append(args, "--input-format", "stream-json")
	}
	args = append(args, "--output-format", "stream-json", "--verbose", "--include-hook-events")
	args = append(args, s.baseArgs()...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.Command(s.claude, args...)
	cmd.Dir = s.work
	cmd.Env = s.environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	r := &run{Start: time.Now()}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start claude: %v", err)
	}
	s.track(cmd.Process.Pid)
	s.pid.Store(int64(cmd.Process.Pid))
	stop := context.AfterFunc(ctx, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop()
	send := func(i int) {
		if len(prompts) == 1 {
			in.Close()
			return
		}
		if i == len(prompts) {
			in.Close()
			return
		}
		msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompts[i]}})
		in.Write(append(msg, '\n'))
	}
	sent := 0
	send(sent)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		ev := event{At: time.Now(), Raw: line}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		r.Events = append(r.Events, ev)
		if ev.Type == "result" && len(prompts) > 1 && sent < len(prompts) {
			sent++
			send(sent)
		}
	}
	r.Err = cmd.Wait()
	r.End = time.Now()
	r.Stderr = stderr.String()
	if ctx.Err() != nil {
		r.Err = fmt.Errorf("claude -p did not finish within %v: %w", timeout, ctx.Err())
	}
	return r
}

func (s *session) track(pgid int) {
	s.mu.Lock()
	s.pgids = append(s.pgids, pgid)
	s.mu.Unlock()
}

// trackPID kills pid at cleanup: a server the test stopped or that may
// have left Claude Code's process group.
func (s *session) trackPID(pid int) {
	s.mu.Lock()
	s.pids = append(s.pids, pid)
	s.mu.Unlock()
}

// claudePID is the running claude process (0 before it started).
func (s *session) claudePID() int { return int(s.pid.Load()) }

// killAll kills every process group the session started, so a stopped or
// orphaned server never outlives its test.
func (s *session) killAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Servers behind a shim run in their own process group: kill every
	// descendant first, then the groups.
	for _, pg := range s.pgids {
		for _, p := range descendants(pg) {
			syscall.Kill(p.PID, syscall.SIGCONT)
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	for _, pg := range s.pgids {
		syscall.Kill(-pg, syscall.SIGCONT)
		syscall.Kill(-pg, syscall.SIGKILL)
	}
	for _, pid := range s.pids {
		syscall.Kill(pid, syscall.SIGCONT)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// step is one prompt of a session and the script turn the model is asked
// for last because of it, or, when Want is set, the request that ends it:
// what arrives in a request Claude Code decides on by itself (a background
// hook's notification, a prompt queued behind one) gets a turn index that
// is not known in advance.
type step struct {
	Prompt string
	Until  int
	Want   func(*Request) bool
}

// wait waits until the model got the step's last request.
func (st step) wait(m *Model, timeout time.Duration) bool {
	if st.Want != nil {
		return m.WaitRequest(st.Want, timeout) != nil
	}
	return m.WaitTurn(st.Until, timeout)
}

func (st step) String() string {
	if st.Want != nil {
		return fmt.Sprintf("the request %q leads to", st.Prompt)
	}
	return fmt.Sprintf("turn %d after %q", st.Until, st.Prompt)
}

// drive runs the session's script with one prompt; see driveSteps.
func (s *session) drive(interactive bool, prompt string, lastTurn int) *run {
	s.t.Helper()
	return s.driveSteps(interactive, step{Prompt: prompt, Until: lastTurn})
}

// driveSteps runs the session's script with prompts, as `claude -p`, or
// typed into an interactive session (tmux), each once the model has been
// asked for the previous step's last turn; the session is left once the
// last step's turn was asked for. It returns the -p run, nil when
// interactive.
func (s *session) driveSteps(interactive bool, steps ...step) *run {
	s.t.Helper()
	last := steps[len(steps)-1]
	if !interactive {
		var prompts []string
		for _, st := range steps {
			prompts = append(prompts, st.Prompt)
		}
		timeout := s.timeout
		if timeout == 0 {
			timeout = 3 * time.Minute
		}
		r := s.runP(prompts, timeout)
		r.mustOK(s.t)
		if !last.wait(s.model, 0) {
			s.t.Fatalf("the session ended before the model got %s\nstream:\n%s", last, r.dump())
		}
		return r
	}
	ts := s.startInteractive(readyPrompt, time.Minute)
	for _, st := range steps {
		ts.typeLine(st.Prompt)
		if !st.wait(s.model, 3*time.Minute) {
			s.t.Fatalf("the model never got %s\n%s", st, ts)
		}
		// Let the turn's answer reach the screen before typing on.
		ts.waitScreen(readyPrompt, 30*time.Second)
	}
	ts.quit()
	return nil
}

// mustOK fails the test when the run failed, with its output.
func (r *run) mustOK(t *testing.T) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("claude -p: %v\nstderr:\n%s\nstream:\n%s", r.Err, r.Stderr, r.dump())
	}
}

func (r *run) dump() string {
	var b strings.Builder
	for _, e := range r.Events {
		fmt.Fprintf(&b, "+%6.2fs %s\n", e.At.Sub(r.Start).Seconds(), truncate(string(e.Raw), 600))
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// hookRun is one hook execution reported with --include-hook-events.
type hookRun struct {
	Name     string `json:"hook_name"`
	Event    string `json:"hook_event"`
	Output   string `json:"output"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exit_code"`
	Outcome  string `json:"outcome"`
}

// hooks returns the finished hook runs of the session.
func (r *run) hooks() []hookRun {
	var out []hookRun
	for _, e := range r.Events {
		if e.Type != "system" || e.Subtype != "hook_response" {
			continue
		}
		var h hookRun
		if json.Unmarshal(e.Raw, &h) == nil {
			out = append(out, h)
		}
	}
	return out
}

// shimRecords returns the state records of the session's shims.
func (s *session) shimRecords() []*state.Record {
	paths, _ := filepath.Glob(filepath.Join(s.stateDir(), "mcp-heal", "shims", "*.json"))
	var out []*state.Record
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var r state.Record
		if json.Unmarshal(b, &r) == nil && procinfo.Alive(r.ShimPID) {
			out = append(out, &r)
		}
	}
	return out
}

// waitShim waits until the live shim of server has a record for which ok
// holds.
func (s *session) waitShim(server string, timeout time.Duration, ok func(*state.Record) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		var last []*state.Record
		for _, r := range s.shimRecords() {
			if r.Server != server {
				continue
			}
			last = append(last, r)
			if ok(r) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(last)
			return fmt.Errorf("shim of %q did not reach the wanted state in %v; records: %s", server, timeout, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// claudeReleases are the Claude Code releases a scenario runs on when it
// checks a behaviour in both: the pin and the newest.
var claudeReleases = []string{testenv.ClaudeCode, testenv.ClaudeCode332}

// onReleases runs f as a subtest on each of claudeReleases, named by its
// version number, in parallel when parallel.
func onReleases(t *testing.T, parallel bool, f func(t *testing.T, version string)) {
	for _, version := range claudeReleases {
		t.Run(version[strings.LastIndex(version, "@")+1:], func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			f(t, version)
		})
	}
}
