//go:build unix

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestIncidentClosesWhenServerAnswers: with no hook after a call, an
// incident still closes once its server answers again. An unwrapped stdio
// server dies during a call (PostToolUseFailure records the incident and
// marks the server for PreToolUse); Claude Code (`-p`) starts it again for
// the next call, whose PreToolUse the binary answers and marks; `status`,
// run while the session goes on, already says the server works (that call
// did not fail), and the PreToolUse of the call after records it ok, so
// the launcher's healthy path is back.
func TestIncidentClosesWhenServerAnswers(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code")
	t.Parallel()
	var s *session
	var status []byte
	s = newSession(t,
		Turn{Tools: []ToolUse{call("ex", example.ToolCrash, map[string]any{})}},
		Turn{Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "two"})}},
		Turn{
			Before: func() error {
				var err error
				status, err = s.mcpHeal("status", "--json", "ex")
				if err != nil {
					t.Errorf("mcp-heal status --json ex: %v\n%s", err, status)
				}
				return nil
			},
			Tools: []ToolUse{call("ex", "echo", map[string]any{"text": "three"})},
		},
		Turn{Text: "Done."},
	)
	s.withPlugin()
	s.userScope = true // where status finds it
	s.addExample("ex", false, nil)
	r := s.runP([]string{"Crash the server, then echo twice."}, 3*time.Minute)
	r.mustOK(t)
	wantHooksRan(t, r, "PreToolUse", "PostToolUseFailure")
	if crashed := mustResult(t, s.model, 1, ToolUseID(0, 0)); !crashed.IsError {
		t.Fatalf("the crash call succeeded (%q); want the server to die during it", crashed.Text)
	}
	wantOK(t, "the call after the crash", mustResult(t, s.model, 2, ToolUseID(1, 0)), "two")
	wantOK(t, "the call after that", mustResult(t, s.model, 3, ToolUseID(2, 0)), "three")

	var rep struct {
		Servers []struct {
			Name   string `json:"name"`
			Health string `json:"health"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(status, &rep); err != nil || len(rep.Servers) != 1 {
		t.Fatalf("status --json: %v\n%s", err, status)
	}
	if rep.Servers[0].Health != health.Healthy {
		t.Errorf("status after a call that did not fail says %q, want ok\n%s", rep.Servers[0].Health, status)
	}

	b, err := os.ReadFile(filepath.Join(s.stateDir(), "mcp-heal", "incidents.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ins []state.Incident
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var in state.Incident
		if err := json.Unmarshal(line, &in); err != nil {
			t.Fatalf("incident line %q: %v", line, err)
		}
		ins = append(ins, in)
	}
	var classes []string
	for _, in := range ins {
		classes = append(classes, in.Class+"/"+in.Event)
	}
	if len(ins) != 2 || ins[0].Class != string(health.ConnClosed) || ins[1].Class != "ok" || ins[1].Event != "PreToolUse" {
		t.Errorf("incidents: %v; want connection-closed, then ok recorded by PreToolUse", classes)
	}
	att, _ := os.ReadDir(filepath.Join(s.stateDir(), "mcp-heal", "attention"))
	if len(att) != 0 {
		t.Errorf("attention markers left after the server answered: %v", att)
	}
}
