package health_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// TestVocabulary pins, for every class, what each reader is told: whether
// Claude Code gave up on the server for the session, what `status` says
// after an incident of the class (in a shell and from /mcp-heal), what
// `doctor` hints, what PreToolUse warns of, what PostToolUseFailure tells
// the model (not probed, and after a probe that failed);
// TestShimErrorsClassified does the shim's replies, PreToolUse's deny and
// SessionStart's line.
func TestVocabulary(t *testing.T) {
	const x = "srv"
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	at := now.Add(-time.Minute).Local().Format("15:04:05")
	reconnectShell := "run /mcp reconnect srv in Claude Code"
	type row struct {
		dead   bool
		status string // Detail after an incident of the class, shell audience
		hook   string // the advice when the server was not probed
		probed string // the advice when a fresh probe failed ("boom"): a fragment
	}
	rows := map[health.Class]row{
		health.ConnClosed: {false, "connection-closed at " + at,
			`mcp-heal: MCP server "srv" exited during this call, so the call may or may not have taken effect: check whether it did before retrying. If the tool is then unavailable, ask the user to run ` + "`/mcp reconnect srv`.",
			"Its command now fails (boom): continue without it and ask the user to fix it (`/mcp-heal doctor srv`)."},
		health.ClosedBeforeRun: {false, "closed-before-run at " + at,
			`mcp-heal: MCP server "srv"'s connection closed before the call ran, so it had no effect: retry it now.`, "retry it now"},
		health.ClosedBeforeAnswer: {false, "closed-before-answer at " + at,
			`mcp-heal: MCP server "srv" lost its connection during this call, so the call may or may not have taken effect: check whether it did before retrying. If the tool is then unavailable, ask the user to run ` + "`/mcp reconnect srv`.",
			"Its command now fails (boom)"},
		health.NotConnected: {true, reconnectShell + ": not-connected at " + at + "; Claude Code will not use it again this session",
			`mcp-heal: MCP server "srv" is disconnected and Claude Code will not restart it in this session: continue without it and ask the user to run ` + "`/mcp reconnect srv`.",
			"cannot start (boom); Claude Code will not retry it in this session. Continue without it and ask the user to fix it (`/mcp-heal doctor srv`), then run `/mcp reconnect srv`."},
		health.Disconnected: {true, reconnectShell + ": disconnected at " + at + "; Claude Code will not use it again this session",
			`mcp-heal: MCP server "srv" is disconnected and Claude Code will not restart it in this session: continue without it and ask the user to run ` + "`/mcp reconnect srv`.",
			"cannot start (boom)"},
		health.Cooldown: {false, "cooldown at " + at,
			`mcp-heal: MCP server "srv" is unreachable; Claude Code tries it again by itself within a few seconds: retry then, and continue without it if it still fails.`,
			"is down (boom); Claude Code keeps retrying it by itself"},
		health.GaveUp: {false, "reconnect-gave-up at " + at,
			`mcp-heal: MCP server "srv" is unreachable; Claude Code tries it again by itself within a few seconds: retry then, and continue without it if it still fails.`,
			"is down (boom); Claude Code keeps retrying it by itself"},
		health.Refused: {false, "connection-refused at " + at,
			`mcp-heal: MCP server "srv" is unreachable; Claude Code tries it again by itself within a few seconds: retry then, and continue without it if it still fails.`,
			"is down (boom)"},
		health.Reset: {false, "connection-reset at " + at,
			`mcp-heal: the connection to MCP server "srv" broke during this call, so it may or may not have taken effect: check whether a call that changes something already ran, then retry in a few seconds.`,
			"does not answer now (boom)"},
		health.SessionLost: {true, reconnectShell + ": session-lost at " + at + "; Claude Code will not use it again this session",
			`mcp-heal: MCP server "srv" restarted and dropped Claude Code's session, which Claude Code does not renew by itself: ask the user to run ` + "`/mcp reconnect srv`, then retry.",
			"does not answer now (boom). Continue without it and ask the user to run `/mcp reconnect srv` once it is back."},
		health.IdleTimeout: {false, "idle-timeout at " + at,
			`mcp-heal: MCP server "srv" did not answer this call in time and may be hung, so the call may or may not have taken effect: check whether it did. If the next call hangs too, ask the user to run ` + "`/mcp reconnect srv`.",
			"It does not answer a fresh connection either (boom)"},
		health.RequestTimeout: {false, "request-timeout at " + at,
			`mcp-heal: MCP server "srv" did not answer this call in time and may be hung, so the call may or may not have taken effect: check whether it did. If the next call hangs too, ask the user to run ` + "`/mcp reconnect srv`.",
			"It does not answer a fresh connection either (boom)"},
		health.StillConnecting: {false, "still-connecting at " + at,
			`mcp-heal: MCP server "srv" is still starting: wait a few seconds and retry the call.`, "wait a few seconds"},
		health.ShimRestarted: {false, "shim-restarted at " + at,
			`mcp-heal: MCP server "srv"'s process died during this call and mcp-heal restarted it; the call was not retried and may or may not have taken effect, so check whether it did before retrying it.`,
			"check whether it did before retrying it"},
		health.ShimFailed: {false, "shim-failed at " + at,
			`mcp-heal: MCP server "srv" is crash-looping (exited with code 1), so calls to it are not sent. Continue without it and ask the user to fix it (` + "`/mcp-heal doctor srv`); `/mcp-heal heal srv` then restarts it at once.",
			"its command still fails now (boom)"},
		health.CannotStart: {false, "cannot-start at " + at,
			`mcp-heal: MCP server "srv" cannot start (command not found: /no/such), so calls to it are not sent. Continue without it and ask the user to fix its command in the MCP config (` + "`/mcp-heal doctor srv`); `/mcp-heal heal srv` then restarts it at once.",
			"its command still fails now (boom)"},
		health.ShimUnreachable: {false, "shim-unreachable at " + at,
			`mcp-heal: MCP server "srv" is unreachable, so this call was not sent; mcp-heal keeps reconnecting in the background: continue without it and retry later.`,
			"is unreachable (boom), so this call was not sent"},
		health.OK: {false, "", "", ""},
	}
	for _, c := range health.Classes() {
		want, ok := rows[c]
		if !ok {
			t.Errorf("class %s has no row: add what every reader is told", c)
			continue
		}
		t.Run(string(c), func(t *testing.T) {
			if c.Info().Meaning == "" {
				t.Error("no meaning")
			}
			if c.Dead() != want.dead || health.NeedsReconnect(string(c)) != want.dead {
				t.Errorf("Dead = %v, want %v", c.Dead(), want.dead)
			}
			in := &state.Incident{Time: now.Add(-time.Minute), Server: x, Class: string(c)}
			v := health.Judge(health.Entry{Name: x, Wrapped: true}, nil, in, now, health.Shell)
			if c == health.OK {
				if v.Health != health.Healthy {
					t.Errorf("status after ok: %+v", v)
				}
				return
			}
			if v.Health != health.Failing || v.Detail != want.status {
				t.Errorf("status:\n got %q %q\nwant %q %q", v.Health, v.Detail, health.Failing, want.status)
			}
			// The same verdict from /mcp-heal names the slash command only.
			vc := health.Judge(health.Entry{Name: x, Wrapped: true}, nil, in, now, health.Claude)
			if want.dead && !strings.HasPrefix(vc.Detail, "run /mcp reconnect srv: ") {
				t.Errorf("status from /mcp-heal: %q", vc.Detail)
			}
			// PreToolUse warns before the next call only about a server
			// Claude Code gave up on (the hook stays silent otherwise).
			if want.dead {
				if got, w := health.DeadNotice(x, c, now, false), "mcp-heal: MCP server \"srv\" was found disconnected at "+now.Local().Format("15:04:05")+" ("+string(c)+") and Claude Code does not reconnect it by itself; if this call fails, continue without it and ask the user to run `/mcp reconnect srv`."; got != w {
					t.Errorf("PreToolUse notice:\n got %s\nwant %s", got, w)
				}
			}
			hint := health.IncidentHint(string(c), x, health.Shell)
			if (hint == reconnectShell) != want.dead || (!want.dead && hint != "") {
				t.Errorf("doctor hint %q (dead %v)", hint, want.dead)
			}
			sit := health.Situation{Server: x, Class: c}
			switch c {
			case health.ShimFailed:
				sit.Shim = "exited with code 1"
			case health.CannotStart:
				sit.Shim = "command not found: /no/such"
			}
			if got := health.Advice(sit); got != want.hook {
				t.Errorf("hook advice:\n got %s\nwant %s", got, want.hook)
			}
			sit.Probe = health.Found{Probed: true, Why: "boom"}
			if got := health.Advice(sit); !strings.Contains(got, want.probed) {
				t.Errorf("hook advice after a failed probe:\n got %s\nwant it to contain %s", got, want.probed)
			}
			for _, s := range []string{health.Advice(sit), want.hook} {
				if strings.Contains(strings.ReplaceAll(s, "/mcp-heal ", ""), "mcp-heal doctor") || strings.Contains(s, "`mcp-heal ") {
					t.Errorf("hook advice names a shell command: %s", s)
				}
			}
		})
	}
}

// TestShimErrorsClassified: the shim's error replies, as Claude Code
// shows them, are classified back to their class with the server's name,
// and a failed shim record is judged, denied and advised the same way.
func TestShimErrorsClassified(t *testing.T) {
	for _, tt := range []struct {
		text  string
		class health.Class
	}{
		{health.CrashLoopError("tiny", health.Cause{Kind: state.CauseExit, Code: 1}, 12*time.Millisecond, `"boom"`, 30*time.Second), health.ShimFailed},
		{health.CannotStartError("tiny", "command not found: /no/such/server"), health.CannotStart},
	} {
		m, ok := health.Classify("MCP error -32603: " + tt.text)
		if !ok || m.Class != tt.class || m.Server != "tiny" {
			t.Errorf("Classify(%q) = %+v, %v; want %s for tiny", tt.text, m, ok, tt.class)
		}
	}
	if got := health.CannotStartError("tiny", "command not found: /x"); got != `MCP server "tiny" cannot start: its command cannot be run (command not found: /x); this call was not sent; fix the command in the MCP config, then run /mcp-heal heal tiny.` {
		t.Errorf("CannotStartError = %s", got)
	}

	for _, tt := range []struct {
		rec                  state.Record
		class                health.Class
		status, deny, doctor string
	}{
		{state.Record{State: state.Failed, Failure: string(health.CannotStart), LastError: "command not found: /no/such"}, health.CannotStart,
			"fix the command in the MCP config, then run mcp-heal heal srv: cannot start: command not found: /no/such",
			"mcp-heal: MCP server \"srv\" cannot start (command not found: /no/such), so this call was not sent; mcp-heal keeps trying it in the background. Continue without this server and ask the user to fix its command in the MCP config (`/mcp-heal doctor srv`); `/mcp-heal heal srv` then starts it.",
			"fix the command in the MCP config, then run /mcp-heal heal srv"},
		{state.Record{State: state.Failed, LastError: "exited with code 1", Restarts: 5}, health.ShimFailed,
			"fix it (mcp-heal doctor srv), then run mcp-heal heal srv: crash loop: exited with code 1; 5 restarts",
			"mcp-heal: MCP server \"srv\" is crash-looping (exited with code 1; 5 restarts), so this call was not sent; mcp-heal keeps trying it in the background. Continue without this server and ask the user to fix it (`/mcp-heal doctor srv`); `/mcp-heal heal srv` restarts it at once.",
			"fix it (/mcp-heal doctor srv), then run /mcp-heal heal srv"},
	} {
		r := tt.rec
		if c := health.ShimClass(&r); c != tt.class {
			t.Errorf("ShimClass = %s, want %s", c, tt.class)
		}
		v := health.Judge(health.Entry{Name: "srv", Wrapped: true}, &r, nil, time.Now(), health.Shell)
		if v.Health != health.Failing || v.Detail != tt.status {
			t.Errorf("status: got %q %q\nwant %q", v.Health, v.Detail, tt.status)
		}
		why := health.ExitSummary(&r)
		if tt.class == health.CannotStart {
			why = r.LastError
		}
		if got := health.Deny("srv", tt.class, why); got != tt.deny {
			t.Errorf("PreToolUse deny:\n got %s\nwant %s", got, tt.deny)
		}
		if _, todo := health.FailedShim(&r, "srv", health.Claude); todo != tt.doctor {
			t.Errorf("doctor hint from /mcp-heal: %s", todo)
		}
	}
}

func TestAudience(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == health.EnvContext {
				return v
			}
			return ""
		}
	}
	if a := health.FromEnv(env("")); a != health.Shell || a.Cmd("wrap --all") != "mcp-heal wrap --all" {
		t.Errorf("shell: %v %s", a, a.Cmd("wrap --all"))
	}
	if a := health.FromEnv(env(health.ContextClaude)); a != health.Claude || a.Cmd("wrap --all") != "/mcp-heal wrap --all" || a.Reconnect("x") != "/mcp reconnect x" {
		t.Errorf("claude: %v %s", a, a.Cmd("wrap --all"))
	}
	if got := health.SessionNotice([]string{"a"}, []string{"b", "c", "d", "e"}, nil, nil); got != "mcp-heal: run /mcp-heal doctor: MCP servers failing: a; run /mcp-heal wrap --all: MCP servers not protected against crashes and hangs: b, c, d and 1 more." {
		t.Errorf("SessionNotice = %s", got)
	}
}
