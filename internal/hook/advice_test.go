package hook

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestAdviceDecisions drives the Handler in process, with the outside
// world (config, signals) stubbed: for each failure it must pick the right
// action (SIGHUP the shim or not; it has no way to probe: a hook starts no
// process) and the advice of that class. No binary, no server.
func TestAdviceDecisions(t *testing.T) {
	type want struct {
		action, advice string // advice: a fragment
		signalled      bool
	}
	shimRec := func(st, failure, lastErr string) *state.Record {
		// This test process stands in for a live shim.
		return &state.Record{Server: "srv", Session: "s1", ShimPID: os.Getpid(), Mode: state.ModeStdio, State: st, Failure: failure, LastError: lastErr, Started: time.Now()}
	}
	for _, tt := range []struct {
		name      string
		errText   string
		shim      *state.Record
		signalErr bool
		want      want
	}{
		// No probe: what the file system says without starting anything
		// (the command is not there) is said, with doctor.
		{"unwrapped not-connected: no probe", `MCP server "srv" is not connected`, nil, false,
			want{health.ActNone, "is disconnected and cannot start (command not found: /no/such); Claude Code will not retry it in this session. Continue without it and ask the user to fix it (`/mcp-heal doctor srv`), then run `/mcp reconnect srv`.", false}},
		{"closed before run", `MCP server "srv" connection closed before the tool call ran`, nil, false,
			want{health.ActNone, "so it had no effect: retry it now", false}},
		{"wrapped crash loop: no probe, no signal", `MCP error -32603: MCP server "srv" is failing (crash loop): it exited with code 1; mcp-heal keeps restarting it (at most every 30s); this call was not sent`,
			shimRec(state.Failed, "", "exited with code 1"), false,
			want{health.ActNone, "is crash-looping (exited with code 1), so calls to it are not sent. Continue without it and ask the user to fix it", false}},
		{"wrapped cannot start", `MCP error -32603: MCP server "srv" cannot start: command not found: /no/such; fix the command in the MCP config, then run /mcp-heal heal srv; this call was not sent`,
			shimRec(state.Failed, "cannot-start", "command not found: /no/such"), false,
			want{health.ActNone, "cannot start (command not found: /no/such), so calls to it are not sent. Continue without it and ask the user to fix its command in the MCP config", false}},
		{"wrapped hung: SIGHUP", `MCP server "srv" tool "t" sent no response or progress for 30s; aborting.`,
			shimRec(state.Running, "", ""), false,
			want{health.ActSighup, "stopped answering, so mcp-heal restarted it", true}},
		// The error is the shim's own account: nothing is added to it.
		{"wrapped shim restarted: nothing to do", `MCP error -32603: server process exited (signal 9) while this call was running; it was restarted; the call was not retried and may or may not have taken effect`,
			shimRec(state.Running, "", ""), false,
			want{health.ActNone, "", false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			testenv.UseStateDir(t, testenv.TempDir(t))
			if tt.shim != nil {
				if err := state.Write(tt.shim); err != nil {
					t.Fatal(err)
				}
			}
			var signalled bool
			h := &Handler{
				Getenv: func(k string) string {
					return map[string]string{"HOME": testenv.TempDir(t), "CLAUDE_PROJECT_DIR": "/p"}[k]
				},
				Now: time.Now,
				Log: slog.New(slog.DiscardHandler),
				Discover: func(claudecfg.Options) ([]claudecfg.Server, error) {
					return []claudecfg.Server{{Name: "srv", Scope: claudecfg.ScopeUser, Transport: "stdio", Command: "/no/such", Wrapped: tt.shim != nil}}, nil
				},
				Signal: func(pid int, sig syscall.Signal) error {
					if pid != os.Getpid() || sig != syscall.SIGHUP {
						t.Errorf("signal %v to %d", sig, pid)
					}
					signalled = true
					if tt.signalErr {
						return syscall.EPERM
					}
					return nil
				},
				Procs: func() ([]Proc, error) { return nil, nil },
			}
			payload, _ := json.Marshal(map[string]any{"hook_event_name": PostToolUseFailure, "session_id": "s1", "tool_name": "mcp__srv__t",
				"mcp_server": map[string]string{"name": "srv"}, "error": tt.errText})
			out := h.Handle(context.Background(), PostToolUseFailure, payload)
			var reply output
			if err := json.Unmarshal(out, &reply); err != nil || reply.HookSpecificOutput == nil {
				t.Fatalf("reply %q: %v", out, err)
			}
			if got := reply.HookSpecificOutput.AdditionalContext; !strings.Contains(got, tt.want.advice) || tt.want.advice == "" && got != "" {
				t.Errorf("advice %q\nwant it to contain %q", got, tt.want.advice)
			}
			if signalled != tt.want.signalled {
				t.Errorf("signalled %v, want %v", signalled, tt.want.signalled)
			}
			b, _ := os.ReadFile(filepath.Join(state.Dir(), "incidents.jsonl"))
			var in state.Incident
			if json.Unmarshal(b, &in) != nil || in.Action != tt.want.action {
				t.Errorf("incident %s, want action %s", b, tt.want.action)
			}
		})
	}
}
