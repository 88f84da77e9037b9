//go:build unix

package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/statusline"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

var updateLines = flag.Bool("update", false, "rewrite testdata/command-lines.golden")

// lineKind says how a printed line is judged: an action line must start
// with what to do, and the action must end by column 80; an info line
// asks nothing, for the reason given.
type lineKind struct {
	prefix string // what precedes the action
	info   string // why the line asks nothing
	action bool   // the line is an action (after prefix)
	row    bool   // a wrap/unwrap row: its head (name, result, file) comes first by design
}

// kindOf sorts one line of the commands' output (internal/health's
// TestUserLinesGolden covers the monitor, the hooks and status's notes).
func kindOf(line string) lineKind {
	for _, p := range []string{"mcp-heal: hint: ", "          hint: ", "  next  ", "Note: "} {
		if strings.HasPrefix(line, p) {
			return lineKind{prefix: p, action: true}
		}
	}
	if m := regexp.MustCompile(`^MCP \d+/\d+ (ok$|· )`).FindString(line); m != "" {
		if strings.HasPrefix(line[len(m):], "run ") {
			return lineKind{prefix: m, action: true}
		}
		return lineKind{info: "the status line's glance: what is so, nothing to do"}
	}
	switch {
	case strings.HasPrefix(line, "SERVER  "), regexp.MustCompile(`^\S+ +(user|local|project|plugin|managed) +\S+ +(yes|no) `).MatchString(line):
		return lineKind{info: "status's table: what is so"}
	case regexp.MustCompile(`^  [\w-]+: protects the entry of the same name in `).MatchString(line):
		return lineKind{info: "status's note on a local copy: what is so (as in internal/health's table)"}
	case strings.HasPrefix(line, "mcp-heal: error: "):
		return lineKind{info: "what failed; the hint line below it carries the action"}
	case strings.HasPrefix(line, "mcp-heal: backup of "):
		return lineKind{info: "where the file as it was is kept"}
	case regexp.MustCompile(`^  (ok   |warn |ERROR) `).MatchString(line):
		return lineKind{info: "a finding; its hint line carries the action"}
	case strings.HasPrefix(line, "          | "):
		return lineKind{info: "a finding's detail"}
	case strings.HasPrefix(line, "  done  "):
		return lineKind{info: "what heal did"}
	case regexp.MustCompile(`^\S+  \(\w+ scope, `).MatchString(line):
		return lineKind{info: "doctor's heading of a server"}
	case line == "Still to do:", line == "Nothing left to do.":
		return lineKind{info: "heal's summary heading"}
	case strings.HasPrefix(line, "Restart Claude Code "), strings.HasPrefix(line, "Run "), strings.HasPrefix(line, "Set "), strings.HasPrefix(line, "To show "):
		return lineKind{action: true}
	case strings.HasSuffix(line, "; nothing was changed."):
		return lineKind{info: "says nothing needs doing"}
	case line == "no kept server is running":
		return lineKind{info: "says nothing needs doing"}
	case strings.HasPrefix(line, "Added the statusLine to "):
		return lineKind{info: "what --install did"}
	case regexp.MustCompile(`^  [\w-]+: `).MatchString(line) && !strings.Contains(line, " hint: "):
		return lineKind{prefix: line[:strings.Index(line, ": ")+2], action: true} // heal's "Still to do" row
	case skippedAsks(line) != "":
		return lineKind{prefix: skippedAsks(line), action: true, row: true}
	case regexp.MustCompile(`^[\w-]+: (wrapped|unwrapped|already wrapped|not wrapped|skipped) \(`).MatchString(line):
		return lineKind{info: "a row of what wrap/unwrap did"}
	}
	return lineKind{}
}

// skippedAsks is the head of a wrap/unwrap row that skipped a server and
// asks something ("NAME: skipped (SCOPE, FILE): "), or "".
func skippedAsks(line string) string {
	head := regexp.MustCompile(`^[\w-]+: skipped \([^)]*\): `).FindString(line)
	for _, l := range cmdLeads {
		if head != "" && strings.HasPrefix(line[len(head):], l) {
			return head
		}
	}
	return ""
}

// cmdLeads are how an action line may start.
var cmdLeads = []string{
	"run ", "Run ", "install ", "start ", "fix ", "mcp-heal ", "/mcp-heal ", "name one of", "did you mean ",
	"Restart Claude Code", "set ", "keep ", "protect ", "To show ", "chmod ", "check ", "give ", "add ", "send ", "authenticate ", "export ", "nothing to run", "read ", "restart ", "approve it", "wrap the ", "fix or remove ", "Set ", "wait, or run ", "ask ", "approve ", "put ", "remove ", "use ",
}

// commandLines runs the real commands in process against throwaway homes
// and returns what each printed, by case.
func commandLines(t *testing.T) (cases, outs, conts []string) {
	bin := testenv.Binary(t)
	c := newHealCLI(t, fmt.Sprintf(`{"good":{"command":%q,"args":["example-server"]},"notes":{"command":"notes-server"},"abs":{"command":"/opt/notes/bin/notes-server"},"web":{"type":"http","url":"http://127.0.0.1:1/mcp"}}`, bin))
	base := filepath.Dir(c.vars["HOME"])
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "data"))
	norm := func(s string) string {
		s = regexp.MustCompile(`/tmp/Test\w+/\d+`).ReplaceAllString(s, "$$TMP")
		s = strings.ReplaceAll(s, bin, "$BIN")
		s = regexp.MustCompile(`\(\d+ms\)`).ReplaceAllString(s, "(Nms)")
		return regexp.MustCompile(`\.[0-9a-f]{8}\.\d{8}T\d+\.\d+Z-\d+\.bak`).ReplaceAllString(s, ".HASH.TIME.bak")
	}
	cont := "" // why the lines no rule sorts ask nothing, in the case at hand
	add := func(name string, code int, out, errs string) {
		conts = append(conts, cont)
		cases = append(cases, norm(fmt.Sprintf("%s (exit %d)", name, code)))
		outs = append(outs, norm(out+errs))
	}
	runc := func(args ...string) {
		code, out, errs := c.run("", args...)
		add("mcp-heal "+strings.Join(args, " "), code, out, errs)
	}
	for _, n := range []string{"good", "notes", "abs", "web"} { // one by one: doctor's order of several is not fixed
		runc("doctor", n, "--timeout", "10s")
	}
	runc("heal", "good")
	doctorFindings(t, add)
	state.AppendIncident(state.Incident{Server: "notes", Class: "not-connected", Time: time.Date(2026, 12, 7, 13, 4, 40, 0, time.Local)})
	runc("heal", "notes")
	runc("heal", "abs")
	runc("doctor", "nosuch")
	runc("logs", "notes")
	runc("stop", "notes")
	runc("wrp")
	runc("wrap", "--bogus")
	runc("logs")
	runc("logs", "notes", "--traffic")
	runc("logs", "notes", "-n", "-1")
	runc("stop")
	runc("stop", "--all")
	cont = "the advice's continuation, or the settings lines it names"
	// statusline's setup needs a stable copy to name, which an in-process
	// run (a test binary) is not: run the built binary.
	runb := func(args ...string) {
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.vars["HOME"], "XDG_STATE_HOME=" + filepath.Join(base, "state"), "XDG_DATA_HOME=" + filepath.Join(base, "data"), health.EnvContext + "=" + health.ContextClaude}
		code, out, errs := testenv.RunBinary(t, env, "", "", args...)
		add("mcp-heal "+strings.Join(args, " "), code, out, errs)
	}
	runb("statusline")
	runb("statusline", "--install")
	runb("statusline")
	runb("statusline", "--install")
	settings := filepath.Join(c.vars["HOME"], ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o700)
	if err := os.WriteFile(settings, []byte(`{"statusLine":{"type":"command","command":"my-line"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	runb("statusline")
	runb("statusline", "--install")
	if err := os.WriteFile(settings, []byte(`{"statusLine":{"type":"static"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	runb("statusline")
	cont = ""

	w := newCfgEnv(t)
	runw := func(args ...string) {
		code, out, errs := w.run(args...)
		add("mcp-heal "+strings.Join(args, " "), code, out, errs)
	}
	runw("wrap")
	runw("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	runw("wrap", "mem", "--shim", "/opt/mh/mcp-heal")
	runw("status")
	runw("unwrap", "--all")
	runw("unwrap", "mem")
	runw("wrap", "--all", "--project-servers", "skip", "--shim", "/opt/mh/mcp-heal")
	runw("unwrap", "--all")
	runw("wrap", "--all", "--project-servers", "rewrite", "--shim", "/opt/mh/mcp-heal")

	// Rows that skip a server and ask something: an entry with mcp-heal's
	// key edited by hand, a project server not approved, and one a local
	// entry of the same name overrides.
	w = newCfgEnv(t)
	w.write(filepath.Join(w.dots, "claude.json"), `{"mcpServers":{"hand":{"command":"x","mcpHeal":{}}},"projects":{"`+w.proj+`":{"mcpServers":{"dup":{"command":"y"}}}}}`, 0o600)
	w.write(filepath.Join(w.proj, ".mcp.json"), `{"mcpServers":{"unapproved":{"command":"evil"},"dup":{"command":"z"}}}`, 0o644)
	runw("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	runw("unwrap", "hand")
	shimFindings(t, add)
	statusLines(add)
	empty := newHealCLI(t, `{}`)
	code, out, errs := empty.run("", "doctor", "extra")
	add("mcp-heal doctor extra (no servers)", code, out, errs)
	return cases, outs, conts
}

// TestCommandLinesGolden (issue 32, item 3): every line doctor, heal,
// wrap, unwrap, logs, stop, statusline's setup and the CLI's errors print,
// run for real, kept in testdata/command-lines.golden (go test -update
// rewrites it), each marked with the column its action ends at (at most
// 80, action first) or "info" and why it asks nothing.
func TestCommandLinesGolden(t *testing.T) {
	cases, outs, conts := commandLines(t)
	var b strings.Builder
	b.WriteString("# Every line of mcp-heal's commands (TestCommandLinesGolden), run for real.\n# [action N]: the action ends at column N (at most 80); [info: why]: asks nothing;\n# [row, action N after its head]: a wrap/unwrap row, its action measured after \"NAME: skipped (SCOPE, FILE): \".\n")
	for i, name := range cases {
		fmt.Fprintf(&b, "\n== %s\n", name)
		prevHeading := false
		for _, line := range strings.Split(strings.TrimRight(outs[i], "\n"), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			k := kindOf(line)
			if k.info == "" && !k.action && prevHeading {
				k.info = "the server's command or URL, under its heading"
			} else if k.info == "" && !k.action && conts[i] != "" {
				k.info = conts[i]
			}
			prevHeading = strings.HasPrefix(k.info, "doctor's heading")
			mark := ""
			switch {
			case k.info != "":
				mark = "info: " + k.info
			case !k.action:
				mark = "UNSORTED"
				t.Errorf("%s: a line neither action nor info: %q", name, line)
			default:
				rest := line[len(k.prefix):]
				lead := false
				for _, l := range cmdLeads {
					lead = lead || strings.HasPrefix(rest, l)
				}
				n := utf8.RuneCountInString(k.prefix) + utf8.RuneCountInString(rest[:actionEnd(rest)])
				mark = fmt.Sprint("action ", n)
				if k.row {
					// The row's head names the file, whose length is the
					// user's: the action is measured from after it.
					n = utf8.RuneCountInString(rest[:actionEnd(rest)])
					mark = fmt.Sprint("row, action ", n, " after its head")
				}
				if !lead {
					t.Errorf("%s: the action does not come first: %q", name, line)
					mark += ", NOT FIRST"
				}
				if n > 80 {
					t.Errorf("%s: the action ends at column %d, past 80: %q", name, n, line)
				}
			}
			fmt.Fprintf(&b, "[%s]\n%s\n", mark, line)
		}
	}
	testenv.Golden(t, filepath.Join("testdata", "command-lines.golden"), b.String(), *updateLines, "the commands' lines")
}

// actionEnd is where the action of rest ends: at the first ": " (what
// follows is what happened), or the line's end.
func actionEnd(rest string) int {
	if i := strings.Index(rest, ": "); i >= 0 {
		return i
	}
	return len(rest)
}

// doctorFindings runs doctor on servers that fail each way a probe
// tells apart: scripts that cannot run, exit, hang or write junk, and
// HTTP servers that refuse the request.
func doctorFindings(t *testing.T, add func(name string, code int, out, errs string)) {
	dir := testenv.TempDir(t)
	script := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, http.StatusText(code), code) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	servers := map[string]string{
		"noexec":   fmt.Sprintf(`{"command":%q}`, script("noexec.sh", "#!/bin/sh\nexit 0\n", 0o644)),
		"noprog":   fmt.Sprintf(`{"command":%q}`, script("server.txt", "not a program\n", 0o755)),
		"nointerp": fmt.Sprintf(`{"command":%q}`, script("nointerp.sh", "#!/nonexistent/interp\n", 0o755)),
		"exits":    `{"command":"sh","args":["-c","echo 'Error: TOKEN is not set' >&2; exit 1"]}`,
		"junk":     `{"command":"sh","args":["-c","echo Server listening on stdio; sleep 5"]}`,
		"hangs":    `{"command":"sh","args":["-c","sleep 5"]}`,
		"h401":     fmt.Sprintf(`{"type":"http","url":%q}`, status(401)),
		"h403":     fmt.Sprintf(`{"type":"http","url":%q}`, status(403)),
		"h404":     fmt.Sprintf(`{"type":"http","url":%q}`, status(404)),
		"h405":     fmt.Sprintf(`{"type":"http","url":%q}`, status(405)),
		"h500":     fmt.Sprintf(`{"type":"http","url":%q}`, status(500)),
		"badurl":   `{"type":"http","url":"ftp://x"}`,
		"empty":    `{}`,
	}
	var parts []string
	for n, v := range servers {
		parts = append(parts, fmt.Sprintf("%q:%s", n, v))
	}
	c := newHealCLI(t, "{"+strings.Join(parts, ",")+"}")
	for _, n := range []string{"noexec", "noprog", "nointerp", "exits", "junk", "hangs", "h401", "h403", "h404", "h405", "h500", "badurl", "empty"} {
		code, out, errs := c.run("", "doctor", n, "--timeout", "1s")
		add("mcp-heal doctor "+n+" --timeout 1s", code, out, errs)
	}
}

// shimFindings runs doctor and heal on wrapped servers whose shims (fake
// ones, real processes) report a crash loop, a silent server, or
// restarts: doctor's shim findings and heal's "done" lines.
func shimFindings(t *testing.T, add func(name string, code int, out, errs string)) {
	bin := testenv.Binary(t)
	c := newHealCLI(t, fmt.Sprintf(`{"loop":{"command":%q,"args":["example-server"]},"gone":{"command":"notes-server"},"quiet":{"command":%q,"args":["example-server"]},"flaky":{"command":%q,"args":["example-server"]}}`, bin, bin, bin))
	code := 3
	now := time.Now()
	shim := func(name string, r state.Record) {
		pid, _ := fakeshim.Start(t)
		r.Server, r.Session, r.ShimPID, r.Mode = name, "5f1d0c7e-aaaa", pid, state.ModeStdio
		fakeshim.WriteRecord(t, r)
	}
	shim("loop", state.Record{State: state.Failed, Failure: string(health.ShimFailed), Restarts: 5, LastExit: &state.Exit{Cause: state.CauseExit, Code: &code}})
	shim("gone", state.Record{State: state.Failed, Failure: string(health.CannotStart), LastError: "command not found: notes-server"})
	shim("quiet", state.Record{State: state.Running, ChildPID: 2, NotAnswering: &state.NotAnswering{Since: now.Add(-42 * time.Second), Method: "tools/call", Tool: "crunch"}})
	shim("flaky", state.Record{State: state.Backoff, Restarts: 2, LastExit: &state.Exit{Cause: state.CauseExit, Code: &code}})
	for _, args := range [][]string{{"doctor", "loop"}, {"doctor", "gone"}, {"doctor", "quiet"}, {"doctor", "flaky"}, {"heal", "loop"}, {"heal", "gone"}, {"heal", "quiet"}} {
		code, out, errs := c.run("", args...)
		out = regexp.MustCompile(`shim \d+ `).ReplaceAllString(out, "shim PID ")
		out = regexp.MustCompile(`(not answered|not answering) for \d+s`).ReplaceAllString(out, "$1 for Ns")
		add("mcp-heal "+strings.Join(args, " ")+" (shim records)", code, out, errs)
	}
}

// statusLines adds what `mcp-heal statusline` prints in Claude Code's
// status line, from the builder it prints (statusline.Line), for each
// state a session's servers can be in.
func statusLines(add func(name string, code int, out, errs string)) {
	now := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC)
	rec := fakeshim.Records(now)
	ok := rec("web", state.Running, nil)
	for _, c := range []struct {
		name string
		r    *state.Record
	}{
		{"healthy", rec("notes", state.Running, nil)},
		{"restarted", rec("notes", state.Running, func(r *state.Record) { r.Restarts, r.ChildStarted = 1, now.Add(-2*time.Minute) })},
		{"restarting", rec("notes", state.Backoff, nil)},
		{"starting", rec("notes", state.Starting, nil)},
		{"crash loop", rec("notes", state.Failed, func(r *state.Record) { r.Failure = string(health.ShimFailed) })},
		{"cannot start", rec("notes", state.Failed, func(r *state.Record) { r.Failure = string(health.CannotStart) })},
		{"not answering", rec("notes", state.Running, func(r *state.Record) {
			r.NotAnswering = &state.NotAnswering{Since: now.Add(-24 * time.Second), Method: "tools/call"}
		})},
	} {
		add("mcp-heal statusline (in Claude Code's status line): "+c.name, 0, statusline.Line([]*state.Record{ok, c.r}, now, false)+"\n", "")
	}
}
