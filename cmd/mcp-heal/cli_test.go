package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestCLIConventions: the command line behaves the same way everywhere
// (errors name what exists, invalid values are refused, help is help).
func TestCLIConventions(t *testing.T) {
	c := newHealCLI(t, `{"alpha":{"command":"true"},"beta":{"command":"true"}}`)

	// A server that is not configured is an error naming those that are.
	code, out, errOut := c.run("", "status", "nosuch")
	if code != 2 || out != "" || !strings.Contains(errOut, `mcp-heal: error: no MCP server named "nosuch"`) || !strings.Contains(errOut, "mcp-heal: hint: name one of: alpha, beta") {
		t.Errorf("status nosuch: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ := c.run("", "status", "alpha", "--json"); code != 0 || !json.Valid([]byte(out)) || !strings.Contains(out, `"name": "alpha"`) || strings.Contains(out, `"name": "beta"`) {
		t.Errorf("status alpha --json: exit %d, %s", code, out)
	}

	// `help wrap` is `wrap --help`, for every command.
	for _, cmd := range commands {
		c1, o1, e1 := c.run("", "help", cmd.name)
		c2, o2, e2 := c.run("", cmd.name, "--help")
		if c1 != 0 || c1 != c2 || o1 != o2 || e1 != e2 || !strings.HasPrefix(o1, "Usage: mcp-heal "+cmd.name) {
			t.Errorf("help %s: exit %d, %q; %s --help: exit %d, %q", cmd.name, c1, o1, cmd.name, c2, o2)
		}
	}

	// Invalid values are errors, not silently used.
	for _, args := range [][]string{
		{"demo", "--calls", "-1"},
		{"demo", "--workers", "0"},
		{"logs", "alpha", "-n", "-1"},
		{"doctor", "--timeout", "0s"},
		{"heal", "--timeout", "-1s"},
	} {
		if code, _, errOut := c.run("", args...); code != 2 || !strings.HasPrefix(errOut, "mcp-heal: error: ") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}

	// A mistyped command gets the one it probably meant.
	for typo, want := range map[string]string{"stauts": "status", "doctr": "doctor", "unwarp": "unwrap", "lgos": "logs"} {
		code, _, errOut := c.run("", typo)
		if code != 2 || !strings.Contains(errOut, fmt.Sprintf("did you mean 'mcp-heal %s'?", want)) {
			t.Errorf("%s: exit %d, stderr %q", typo, code, errOut)
		}
	}
	// From /mcp-heal, hints name the slash command.
	c.vars["MCP_HEAL_CONTEXT"] = "claude-code"
	if _, _, errOut := c.run("", "stauts"); !strings.Contains(errOut, "did you mean '/mcp-heal status'?") {
		t.Errorf("stauts from /mcp-heal: %q", errOut)
	}
	if _, _, errOut := c.run("", "logs"); !strings.Contains(errOut, "run '/mcp-heal status' for the names") {
		t.Errorf("logs from /mcp-heal: %q", errOut)
	}
	delete(c.vars, "MCP_HEAL_CONTEXT")
	if _, _, errOut := c.run("", "frobnicate"); strings.Contains(errOut, "did you mean") {
		t.Errorf("frobnicate: %q suggests a command that is not close", errOut)
	}
}

// TestDoctorWithoutServers: no servers is a report, not a usage error,
// and --json is always JSON.
func TestDoctorWithoutServers(t *testing.T) {
	c := newHealCLI(t, `{}`)
	for _, cmd := range []string{"doctor", "heal"} {
		code, out, errOut := c.run("", cmd)
		if code != 0 || !strings.HasPrefix(out, "No MCP servers configured for ") || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
		code, out, _ = c.run("", cmd, "--json")
		var v []any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v == nil || len(v) != 0 {
			t.Errorf("%s --json: exit %d, stdout %q; want []", cmd, code, out)
		}
	}
}

// TestLogsHumanByDefault: logs prints one readable line an event; --json
// the log's own lines.
func TestLogsHumanByDefault(t *testing.T) {
	c := newHealCLI(t, `{}`)
	f, err := state.OpenLog("tiny")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 21, 0, 1, 250e6, time.UTC)
	raw := fmt.Sprintf(`{"time":%q,"event":"exit","server":"tiny","shim_pid":42,"reason":"exited with code 1","uptime_ms":12}`, at.Format(time.RFC3339Nano))
	fmt.Fprintf(f, "%s\nnot json\n", raw)
	f.Close()
	code, out, _ := c.run("", "logs", "tiny")
	want := at.Local().Format("15:04:05.000") + ` exit reason="exited with code 1" shim_pid=42 uptime_ms=12` + "\nnot json\n"
	if code != 0 || out != want {
		t.Errorf("logs: exit %d\n got %q\nwant %q", code, out, want)
	}
	if code, out, _ := c.run("", "logs", "tiny", "--json", "-n", "2"); code != 0 || out != raw+"\n\"not json\"\n" {
		t.Errorf("logs --json: exit %d, %q", code, out)
	}
}

// stampWriter records when each write happened.
type stampWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first map[string]time.Time // first time a write contained the key
	keys  []string
}

func (w *stampWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.keys {
		if _, ok := w.first[k]; !ok && bytes.Contains(p, []byte(k)) {
			w.first[k] = time.Now()
		}
	}
	return w.buf.Write(p)
}

// TestDoctorStreams: doctor prints a server's verdict as soon as its probe
// ends, not after the slowest server.
func TestDoctorStreams(t *testing.T) {
	bin := testenv.Binary(t)
	// The slow server is the example server starting for 30 s (not sleep,
	// which Windows lacks).
	c := newHealCLI(t, fmt.Sprintf(`{"fast":{"command":%q,"args":["example-server"]},"slow":{"command":%q,"args":["example-server","--start-delay","30s"]}}`, bin, bin))
	w := &stampWriter{first: map[string]time.Time{}, keys: []string{"fast  (", "slow  ("}}
	var errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: w, Stderr: &errb, Getenv: func(k string) string { return c.vars[k] }}
	start := time.Now()
	code := run(context.Background(), env, []string{"doctor", "--timeout", "4s"})
	end := time.Now()
	fast, slow := w.first["fast  ("], w.first["slow  ("]
	if code != 1 || fast.IsZero() || slow.IsZero() {
		t.Fatalf("doctor: exit %d, output:\n%s%s", code, w.buf.String(), errb.String())
	}
	// The slow probe takes its whole 4 s timeout; the fast one well under.
	if end.Sub(fast) < 2*time.Second || slow.Sub(fast) < 2*time.Second {
		t.Errorf("fast verdict printed %s after the start, the slow one %s, the run ended at %s: not streamed",
			fast.Sub(start), slow.Sub(start), end.Sub(start))
	}
}
