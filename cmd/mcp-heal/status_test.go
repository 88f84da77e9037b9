//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/status"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

func TestStatusReportsShimsAndFailures(t *testing.T) {
	c := wrappedCfgEnv(t, "sess-1")
	now := time.Now().UTC()
	code1 := 1
	// A live shim for mem in this session (this test process stands in for
	// the shim: records of dead pids are ignored), one in another session.
	for _, r := range []*state.Record{
		{Server: "mem", Session: "sess-1", ShimPID: os.Getpid(), Mode: state.ModeStdio, State: state.Running, ChildPID: 4242, Restarts: 2,
			LastExit: &state.Exit{Code: &code1, Reason: "exited with code 1", At: now.Add(-time.Minute)}, LastError: "child exited", Started: now.Add(-time.Hour), ChildStarted: now.Add(-90 * time.Second)},
		{Server: "api", Session: "other", ShimPID: os.Getppid(), Mode: state.ModeRemote, State: state.Failed, Started: now},
	} {
		if err := state.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range []state.Incident{
		{Time: now.Add(-2 * time.Minute), Session: "sess-1", Server: "local-one", Event: "PostToolUseFailure", Class: "not-connected", Error: `MCP server "local-one" is not connected`},
		{Time: now.Add(-3 * time.Minute), Session: "sess-1", Server: "proj-srv", Event: "PostToolUseFailure", Class: "connection-closed"},
		{Time: now.Add(-1 * time.Minute), Session: "sess-1", Server: "proj-srv", Event: "PreToolUse", Class: "ok", Action: "healthy"},
		{Time: now.Add(-1 * time.Minute), Session: "other", Server: "api", Event: "PostToolUseFailure", Class: "not-connected"},
	} {
		if err := state.AppendIncident(in); err != nil {
			t.Fatal(err)
		}
	}

	out := c.status(
		`(?m)^mem +user +stdio +yes +ok +4242 +1m30s +2 +exited with code 1 `,
		`(?m)^local-one +local +stdio +yes +failed `,
		`(?m)^proj-srv +local +stdio +yes +ok `, // the copy that protects the .mcp.json entry
		`(?m)^api +user +http +yes +unknown `,   // its shim and incident belong to another session
		`local-one: run /mcp reconnect local-one in Claude Code: not-connected at `,
		`(?m)^Recent incidents:`,
	)
	if n := strings.Count(out, "\nproj-srv "); n != 1 {
		t.Errorf("the protected project server has %d rows, want 1 (its local copy):\n%s", n, out)
	}
	if strings.Contains(out, "other") {
		t.Errorf("another session's incident shown:\n%s", out)
	}

	rep, out := c.statusJSON()
	got := map[string]string{}
	for _, s := range rep.Servers {
		got[s.Name] = s.Health
		if s.Name == "mem" && (len(s.Shims) != 1 || s.Shims[0].ChildPID != 4242 || !s.Wrapped) {
			t.Errorf("mem: %+v", s)
		}
	}
	if got["local-one"] != "failed" || got["mem"] != "ok" {
		t.Errorf("health: %v", got)
	}
	if strings.Contains(out, "very-secret") || strings.Contains(out, "/tmp/m.json") || strings.Contains(out, "abcdef1234567890") {
		t.Errorf("a secret is in the JSON:\n%s", out)
	}
}

// TestStatusWithRealShim: a real `mcp-heal shim` in front of the example
// server, its child killed: status shows the new child, the restart and how
// the old one ended.
func TestStatusWithRealShim(t *testing.T) {
	bin := testenv.Binary(t)
	c := newCfgEnv(t)
	c.write(filepath.Join(c.dots, "claude.json"), `{"mcpServers":{"ex":{"command":"`+bin+`","args":["example-server"]}}}`, 0o600)
	c.vars["CLAUDE_CODE_SESSION_ID"] = "sess-real"
	if code, out, errs := c.run("wrap", "--all", "--shim", bin); code != 0 {
		t.Fatalf("wrap: %s%s", out, errs)
	}
	cmd, _ := testenv.StartShim(t, []string{"CLAUDE_CODE_SESSION_ID=sess-real"}, "--name", "ex", "--", bin, "example-server")

	current := func() status.Server {
		rep, out := c.statusJSON("ex")
		if len(rep.Servers) != 1 {
			t.Fatalf("status --json ex: %d servers\n%s", len(rep.Servers), out)
		}
		return rep.Servers[0]
	}
	waitFor := func(what string, ok func(status.Server) bool) (s status.Server) {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the server's last status: %+v", s)
			}
		})
		testenv.WaitFor(t, 20*time.Second, what, func() bool { s = current(); return ok(s) })
		return s
	}
	s := waitFor("a running child", func(s status.Server) bool { return len(s.Shims) == 1 && s.Shims[0].ChildPID > 0 && s.Health == "ok" })
	first := s.Shims[0].ChildPID
	if !s.Wrapped || s.Shims[0].ShimPID != cmd.Process.Pid {
		t.Fatalf("status: %+v", s)
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s = waitFor("a restarted child", func(s status.Server) bool {
		return len(s.Shims) == 1 && s.Shims[0].Restarts >= 1 && s.Shims[0].ChildPID > 0 && s.Shims[0].ChildPID != first && s.Health == "ok"
	})
	if e := s.Shims[0].LastExit; e == nil || e.Signal == "" {
		t.Fatalf("last exit: %+v", e)
	}
	_, out, _ := c.run("status", "ex")
	if !regexpMatch(`(?m)^ex +user +stdio +yes +ok +`+strconv.Itoa(s.Shims[0].ChildPID)+` +\S+ +[1-9]\d* +\S+`, out) {
		t.Fatalf("status table:\n%s", out)
	}
}

// TestStatusShellSessions: status in a shell belongs to no session. A
// session that ended (a `claude -p` run, its Claude Code gone) left an
// incident: that is history, marked (ended), not the server's health; a
// live session's dead server is failed, naming that session.
func TestStatusShellSessions(t *testing.T) {
	c := wrappedCfgEnv(t, "")
	now := time.Now().UTC()
	for _, in := range []state.Incident{
		{Time: now.Add(-2 * time.Minute), Session: "p-session-ended", ClaudePID: testenv.EndedPID(t), Server: "local-one", Event: "PostToolUseFailure", Class: "not-connected"},
		{Time: now.Add(-time.Minute), Session: "live-session", ClaudePID: os.Getpid(), Server: "mem", Event: "PostToolUseFailure", Class: "not-connected"},
	} {
		if err := state.AppendIncident(in); err != nil {
			t.Fatal(err)
		}
	}
	out := c.status(
		`(?m)^local-one +local +stdio +yes +unknown `,
		`(?m)^mem +user +stdio +yes +failed `,
		`mem: run /mcp reconnect mem in Claude Code: not-connected at \S+ in session live-ses; Claude Code will not use it again in that session`,
		`(?m)^\S+ +p-sessio \(ended\) +local-one +PostToolUseFailure +not-connected `,
		`(?m)^\S+ +live-ses +mem `,
	)
	if strings.Contains(out, "not-connected at") && strings.Contains(out, "local-one: run /mcp reconnect") {
		t.Errorf("an ended session's incident is shown as the server's health:\n%s", out)
	}
}

// TestStatusIdleServer: a server that exited by itself (issue 30: code 0,
// no call outstanding) is healthy, and status says it starts on the next
// call; no child, no failure. Before, its health was the record's state.
func TestStatusIdleServer(t *testing.T) {
	c := wrappedCfgEnv(t, "sess-1")
	now := time.Now().UTC()
	zero := 0
	r := &state.Record{Server: "mem", Session: "sess-1", ShimPID: os.Getpid(), Mode: state.ModeStdio, State: state.Idle, IdleExits: 2,
		LastExit: &state.Exit{Code: &zero, Reason: "exited with code 0", At: now.Add(-time.Minute)}, Started: now.Add(-time.Hour)}
	if err := state.Write(r); err != nil {
		t.Fatal(err)
	}
	c.status(
		`(?m)^mem +user +stdio +yes +ok +- +- +0 +exited with code 0 `,
		`(?m)^  mem: exited by itself; starts on the next call$`,
	)
}

// wrappedCfgEnv is newCfgEnv with every server wrapped (by a shim at
// /opt/mh/mcp-heal), run in Claude Code session session ("" for a shell).
func wrappedCfgEnv(t *testing.T, session string) *cfgEnv {
	t.Helper()
	c := newCfgEnv(t)
	if session != "" {
		c.vars["CLAUDE_CODE_SESSION_ID"] = session
	}
	if _, _, errs := c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal"); errs == "" {
		t.Fatal("wrap printed no backup line")
	}
	return c
}

// status runs `mcp-heal status`, fails the test unless it exits 0, checks
// that its output matches each of res, and returns the output.
func (c *cfgEnv) status(res ...string) string {
	c.t.Helper()
	code, out, errs := c.run("status")
	if code != 0 {
		c.t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, re := range res {
		if !regexpMatch(re, out) {
			c.t.Errorf("status output does not match %s:\n%s", re, out)
		}
	}
	return out
}

// statusJSON runs `mcp-heal status --json` with args, fails the test
// unless it exits 0 with a report, and returns the report and the JSON.
func (c *cfgEnv) statusJSON(args ...string) (status.Report, string) {
	c.t.Helper()
	code, out, errs := c.run(append([]string{"status", "--json"}, args...)...)
	var rep status.Report
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		c.t.Fatalf("status --json: exit %d, %v\n%s%s", code, err, out, errs)
	}
	return rep, out
}
