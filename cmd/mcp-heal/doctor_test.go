package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// healCLI runs doctor, heal, logs and hook in process against a throwaway
// HOME whose user scope has the given servers.
type healCLI struct {
	t    *testing.T
	vars map[string]string
}

func newHealCLI(t *testing.T, servers string) *healCLI {
	t.Helper()
	base := testenv.TempDir(t)
	home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
	os.MkdirAll(home, 0o755)
	os.MkdirAll(proj, 0o755)
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"mcpServers":`+servers+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	testenv.UseStateDir(t, filepath.Join(base, "state"))
	return &healCLI{t: t, vars: map[string]string{"HOME": home, "CLAUDE_PROJECT_DIR": proj}}
}

func (c *healCLI) run(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return c.vars[k] }}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestDoctorHealCommands(t *testing.T) {
	bin := testenv.Binary(t)
	c := newHealCLI(t, fmt.Sprintf(`{"good":{"command":%q,"args":["example-server"]},"gone":{"command":"mcp-heal-no-such-server"}}`, bin))

	code, out, _ := c.run("", "doctor", "--timeout", "10s")
	if code != 1 || !strings.Contains(out, "answers: mcp-heal-example") || !strings.Contains(out, "ERROR command not found: mcp-heal-no-such-server") {
		t.Fatalf("doctor: exit %d, want 1, output:\n%s", code, out)
	}
	code, out, _ = c.run("", "doctor", "good", "--json")
	var reports []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &reports) != nil || len(reports) != 1 {
		t.Fatalf("doctor good --json: exit %d, output:\n%s", code, out)
	}
	code, _, errOut := c.run("", "doctor", "nosuch")
	if code != 2 || !strings.Contains(errOut, `no MCP server named "nosuch"`) || !strings.Contains(errOut, "name one of: gone, good") {
		t.Fatalf("doctor nosuch: exit %d, stderr %q", code, errOut)
	}
	code, out, _ = c.run("", "heal", "good")
	if code != 0 || !strings.Contains(out, "Nothing left to do.") {
		t.Fatalf("heal good: exit %d, output:\n%s", code, out)
	}
	state.AppendIncident(state.Incident{Server: "gone", Class: "not-connected"})
	code, out, _ = c.run("", "heal", "gone")
	if code != 1 || !strings.Contains(out, "gone: fix gone first: install mcp-heal-no-such-server") || !strings.Contains(out, "then run /mcp reconnect gone in Claude Code") ||
		!strings.Contains(out, "hint: mcp-heal wrap gone") {
		t.Fatalf("heal gone: exit %d, output:\n%s", code, out)
	}
	// Run by the plugin's /mcp-heal, the same advice names slash commands.
	c.vars[health.EnvContext] = health.ContextClaude
	code, out, _ = c.run("", "heal", "gone")
	if code != 1 || !strings.Contains(out, "then run /mcp reconnect gone\n") || !strings.Contains(out, "hint: /mcp-heal wrap gone") {
		t.Fatalf("heal gone from /mcp-heal: exit %d, output:\n%s", code, out)
	}
}

func TestLogsCommand(t *testing.T) {
	c := newHealCLI(t, `{}`)
	f, err := state.OpenLog("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(f, "line %d\n", i)
	}
	f.Close()
	if code, out, _ := c.run("", "logs", "tiny", "-n", "2"); code != 0 || out != "line 4\nline 5\n" {
		t.Fatalf("logs -n 2: exit %d, got %q", code, out)
	}
	if code, out, _ := c.run("", "logs", "tiny", "--json", "-n", "0"); code != 0 || out != "\"line 1\"\n\"line 2\"\n\"line 3\"\n\"line 4\"\n\"line 5\"\n" {
		t.Fatalf("logs --json -n 0: exit %d, got %q", code, out)
	}
	if code, _, errOut := c.run("", "logs", "tiny", "--traffic"); code != 2 || !strings.Contains(errOut, "traffic logging is opt-in") {
		t.Fatalf("logs --traffic without a traffic log: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := c.run("", "logs"); code != 2 {
		t.Fatalf("logs without a server: exit %d, want 2", code)
	}
}

func TestHookCommand(t *testing.T) {
	c := newHealCLI(t, `{}`)
	if code, out, errOut := c.run("{not json", "hook", "PreToolUse"); code != 0 || out != "" || errOut != "" {
		t.Fatalf("hook with junk: exit %d, stdout %q, stderr %q; want 0 and silence", code, out, errOut)
	}
	if code, _, _ := c.run("", "hook"); code != 2 {
		t.Fatalf("hook without an event: exit %d, want 2", code)
	}
	code, out, _ := c.run(`{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"mcp__tiny__echo","error":"MCP server \"tiny\" is not connected","mcp_server":{"name":"tiny"}}`, "hook", "PostToolUseFailure")
	if code != 0 || !strings.Contains(out, "/mcp reconnect tiny") {
		t.Fatalf("hook PostToolUseFailure: exit %d, got %q", code, out)
	}
}
