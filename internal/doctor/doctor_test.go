//go:build unix

package doctor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/doctor"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

func useState(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
}

func TestCheck(t *testing.T) {
	useState(t)
	bin := testenv.Binary(t)
	mark := filepath.Join(t.TempDir(), "cloned-ran")
	servers := []claudecfg.Server{
		{Name: "good", Scope: claudecfg.ScopeUser, Transport: "stdio", Command: bin, Args: []string{"example-server"}, Wrapped: true},
		{Name: "missing", Scope: claudecfg.ScopeUser, Transport: "stdio", Command: "mcp-heal-no-such-server"},
		{Name: "exits", Scope: claudecfg.ScopeProject, Transport: "stdio", Command: "sh", Args: []string{"-c", "echo 'fatal: bad config' >&2; exit 3"}, Approval: claudecfg.Approved},
		{Name: "junk", Scope: claudecfg.ScopeUser, Transport: "stdio", Command: "sh", Args: []string{"-c", "echo 'listening...'; sleep 30"}},
		{Name: "hangs", Scope: claudecfg.ScopeUser, Transport: "stdio", Command: "sleep", Args: []string{"30"}},
		{Name: "plugin:x:y", Scope: claudecfg.ScopePlugin, Transport: "http", URL: "http://127.0.0.1:1/mcp"},
		{Name: "cloned", Scope: claudecfg.ScopeProject, File: "/src/clone/.mcp.json", Transport: "stdio", Command: "sh", Args: []string{"-c", "echo ran > " + mark}, Approval: claudecfg.Rejected},
	}
	d := doctor.New(t.TempDir(), 2*time.Second)
	reports := d.Check(context.Background(), servers)
	if _, err := os.Stat(mark); err == nil {
		t.Error("doctor ran a project server the user rejected")
	}
	want := []struct {
		worst doctor.Severity
		has   []string
	}{
		{doctor.OK, []string{"answers: mcp-heal-example"}},
		{doctor.Error, []string{"command not found: mcp-heal-no-such-server", "not protected"}},
		{doctor.Error, []string{"exited with code 3 before answering initialize; its stderr said: «fatal: bad config»"}},
		{doctor.Error, []string{`non-JSON to stdout: «listening...»`}},
		{doctor.Error, []string{"no answer to initialize within 2s"}},
		{doctor.Error, []string{"connection refused"}},
		{doctor.Warn, []string{"not approved: not run; the user rejected it in this project"}},
	}
	for i, r := range reports {
		var msgs []string
		for _, f := range r.Findings {
			msgs = append(msgs, f.Message)
		}
		all := strings.Join(msgs, "\n")
		if r.Worst() != want[i].worst {
			t.Errorf("%s: worst %s, want %s\n%s", r.Server.Name, r.Worst(), want[i].worst, all)
		}
		for _, s := range want[i].has {
			if !strings.Contains(all, s) {
				t.Errorf("%s: findings lack %q:\n%s", r.Server.Name, s, all)
			}
		}
		if r.Server.Scope == claudecfg.ScopePlugin && strings.Contains(all, "not protected") {
			t.Errorf("plugin server told to wrap itself")
		}
	}
}

// checkAndHeal checks s as doctor does, heals what the check found, and
// returns its report.
func checkAndHeal(t *testing.T, s claudecfg.Server) *doctor.Report {
	d := doctor.New(t.TempDir(), 5*time.Second)
	reports := d.Check(context.Background(), []claudecfg.Server{s})
	d.Heal(context.Background(), reports)
	return reports[0]
}

func TestHeal(t *testing.T) {
	bin := testenv.Binary(t)
	good := claudecfg.Server{Name: "tiny", Scope: claudecfg.ScopeUser, Transport: "stdio", Command: bin, Args: []string{"example-server"}, Wrapped: true}
	bad := good
	bad.Command, bad.Args = "mcp-heal-no-such-server", nil
	code := 1
	t.Run("failed shim, command works", func(t *testing.T) {
		hups := tinyShim(t, state.Record{State: state.Failed, LastExit: &state.Exit{Code: &code}})
		r := checkAndHeal(t, good)
		if len(r.Actions) != 1 || !strings.Contains(r.Actions[0], "restarted the server under shim") || !r.Healed() {
			t.Fatalf("got actions %q next %q", r.Actions, r.Next)
		}
		hups.WaitHUPs(t, 1)
	})
	// A running server not answering is restarted on request (heal) and
	// reported by doctor: the shim only tells of silence, never acts on it.
	t.Run("server not answering", func(t *testing.T) {
		now := time.Now()
		hups := tinyShim(t, state.Record{State: state.Running,
			NotAnswering: &state.NotAnswering{Since: now.Add(-42 * time.Second), Method: "tools/call", Tool: "crunch"}})
		d := doctor.New(t.TempDir(), 5*time.Second)
		d.Now = func() time.Time { return now } // the words say "for 42s" however slow the check
		reports := d.Check(context.Background(), []claudecfg.Server{good})
		var seen bool
		for _, f := range reports[0].Findings {
			seen = seen || strings.Contains(f.Message, `not answering for 42s (a call of its tool "crunch" outstanding`)
		}
		if !seen {
			t.Errorf("doctor does not say the server is not answering: %+v", reports[0].Findings)
		}
		d.Heal(context.Background(), reports)
		r := reports[0]
		if len(r.Actions) != 1 || !strings.Contains(r.Actions[0], "which had not answered for 42s") || !r.Healed() {
			t.Fatalf("got actions %q next %q", r.Actions, r.Next)
		}
		hups.WaitHUPs(t, 1)
	})
	t.Run("failed shim, command still fails", func(t *testing.T) {
		hups := tinyShim(t, state.Record{State: state.Failed, LastExit: &state.Exit{Code: &code}})
		r := checkAndHeal(t, bad)
		if !strings.Contains(r.Next, "fix tiny first: install mcp-heal-no-such-server") || r.Healed() {
			t.Fatalf("got next %q", r.Next)
		}
		hups.NoHUP(t) // its command fails: not signalled
	})
	t.Run("unwrapped server Claude Code gave up on", func(t *testing.T) {
		useState(t)
		state.AppendIncident(state.Incident{Server: "tiny", Class: "not-connected", Event: "PostToolUseFailure"})
		unwrapped := good
		unwrapped.Wrapped = false
		if r := checkAndHeal(t, unwrapped); !strings.Contains(r.Next, "/mcp reconnect tiny") {
			t.Fatalf("got next %q, want /mcp reconnect tiny", r.Next)
		}
		// Once a call succeeded (PreToolUse records ok), nothing is left.
		state.AppendIncident(state.Incident{Server: "tiny", Class: "ok", Event: "PreToolUse"})
		if r := checkAndHeal(t, unwrapped); r.Next != "" || len(r.Incidents) != 0 {
			t.Fatalf("after recovery: got next %q incidents %v", r.Next, r.Incidents)
		}
	})
	// doctor and heal count an incident open by the rule status and the
	// hooks use (state.OpenIncidents): per session, within the hour, until a call
	// of that session goes out after it.
	t.Run("open incidents are those status shows", func(t *testing.T) {
		useState(t)
		unwrapped := good
		unwrapped.Wrapped = false
		d := doctor.New(t.TempDir(), 5*time.Second)
		now := time.Now()
		d.Now = func() time.Time { return now }
		check := func() *doctor.Report {
			reports := d.Check(context.Background(), []claudecfg.Server{unwrapped})
			d.Heal(context.Background(), reports)
			return reports[0]
		}
		state.AppendIncident(state.Incident{Session: "s1", Server: "tiny", Class: "not-connected", Time: now.Add(-2 * time.Hour)})
		if r := check(); r.Next != "" || len(r.Incidents) != 0 {
			t.Fatalf("an incident of two hours ago: got next %q incidents %v, want none open", r.Next, r.Incidents)
		}
		state.AppendIncident(state.Incident{Session: "s1", Server: "tiny", Class: "not-connected", Time: now.Add(-time.Minute)})
		state.AppendIncident(state.Incident{Session: "s2", Server: "tiny", Class: "ok", Time: now.Add(-time.Second)})
		if r := check(); !strings.Contains(r.Next, "/mcp reconnect tiny") || len(r.Incidents) != 1 {
			t.Fatalf("another session's ok closed s1's incident: got next %q incidents %v", r.Next, r.Incidents)
		}
		if err := state.MarkCalled("s1", "tiny", now.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if r := check(); r.Next != "" || len(r.Incidents) != 0 {
			t.Fatalf("called again after the incident: got next %q incidents %v, want none open (status says ok)", r.Next, r.Incidents)
		}
	})
}

// TestHealLeavesStrangersAlone: a failed shim was SIGKILLed and left its
// record; its pid now names an unrelated process. heal must not SIGHUP it
// (the process would exit with status 129) and must drop the record.
func TestHealLeavesStrangersAlone(t *testing.T) {
	bin := testenv.Binary(t)
	good := claudecfg.Server{Name: "tiny", Scope: claudecfg.ScopeUser, Transport: "stdio", Command: bin, Args: []string{"example-server"}, Wrapped: true}
	useState(t)
	stranger := testenv.StartProcess(t, "sleep", "1000")
	// The record as the dead shim wrote it: its own start time and
	// executable, which the stranger does not have.
	code := 1
	if err := state.Write(&state.Record{Server: "tiny", Session: "s1", ShimPID: stranger.Process.Pid, ShimStart: "12345", ShimExe: bin,
		Mode: state.ModeStdio, State: state.Failed, LastExit: &state.Exit{Code: &code}}); err != nil {
		t.Fatal(err)
	}
	rec, err := state.Read(stranger.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	d := doctor.New(t.TempDir(), 5*time.Second)
	reports := d.Check(context.Background(), []claudecfg.Server{good})
	// Check lists the records and already prunes this one; heal must also
	// hold when it is handed a record read before the shim died.
	reports[0].Shims = []*state.Record{rec}
	d.Heal(context.Background(), reports)
	select {
	case <-stranger.Exited():
		t.Fatalf("the unrelated process was signalled: %v", stranger.ProcessState)
	case <-time.After(300 * time.Millisecond):
	}
	if r := reports[0]; r.Healed() || len(r.Actions) != 1 || !strings.Contains(r.Actions[0], "is another process now") {
		t.Fatalf("got actions %q next %q, want the shim left alone as another process", r.Actions, r.Next)
	}
	if _, err := state.Read(stranger.Process.Pid); !os.IsNotExist(err) {
		t.Fatalf("stale record: got %v, want it deleted", err)
	}
}

// tinyShim gives the test a state dir of its own with a live fake shim of
// "tiny" (session s1, stdio) in it, whose record is rec with those filled
// in, and returns the SIGHUPs the fake shim gets.
func tinyShim(t *testing.T, rec state.Record) *testenv.SignalCounter {
	t.Helper()
	useState(t)
	pid, hups := fakeshim.Start(t)
	rec.Server, rec.Session, rec.ShimPID, rec.Mode = "tiny", "s1", pid, state.ModeStdio
	fakeshim.WriteRecord(t, rec)
	return hups
}
