//go:build unix

package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// headless is the environment Claude Code gives hooks in `claude -p`
// (measured on 2.1.328 and 2.1.332; interactive sessions get "1" and
// "cli").
var headless = []string{"CLAUDE_CODE_SESSION_ATTENDED=0", "CLAUDE_CODE_ENTRYPOINT=sdk-cli"}

// TestUserToldOncePerIncident: the user sees one line (systemMessage)
// when Claude Code gave up on a server, not one per failed call; a new
// incident after the server answered again is told again.
func TestUserToldOncePerIncident(t *testing.T) {
	w := newWorld(t)
	w.userConfig(t, `{}`)
	fail := marshal(sharedPayload(t, "PostToolUseFailure.stdio-not-connected.json"))
	pre := tinyCall(t, "PreToolUse.mcp.json", sharedPayload(t, "PostToolUseFailure.stdio-not-connected.json")["session_id"])
	want := "mcp-heal: run /mcp reconnect tiny: MCP server \"tiny\" is disconnected; Claude Code will not use it again in this session (if that fails too, /mcp-heal doctor tiny says why)."
	var told []string
	for range 3 {
		told = append(told, decode(t, w.hook(t, "PostToolUseFailure", fail)).SystemMessage)
		w.hook(t, "PreToolUse", marshal(pre)) // the next call goes out, and fails
	}
	if told[0] != want || told[1] != "" || told[2] != "" {
		t.Fatalf("lines shown to the user over three failed calls: %q, want %q once", told, want)
	}
	if r := decode(t, w.hook(t, "PreToolUse", marshal(pre))); r.SystemMessage != "" || r.HookSpecificOutput.AdditionalContext != "" {
		t.Fatalf("PreToolUse after a call that did not fail: %+v, want nothing", r)
	}
	if in := lastIncident(t, w); in["class"] != "ok" {
		t.Fatalf("the incident was not closed: %v", in)
	}
	if got := decode(t, w.hook(t, "PostToolUseFailure", fail)).SystemMessage; got != want {
		t.Fatalf("a new incident after recovery: got %q, want %q", got, want)
	}
}

// TestHeadlessAdvice: in `claude -p` nobody can run /mcp reconnect (Claude
// Code refuses it there), so neither the model nor the user is told to.
func TestHeadlessAdvice(t *testing.T) {
	w := newWorld(t)
	w.extra = headless
	w.userConfig(t, `{}`)
	failP := sharedPayload(t, "PostToolUseFailure.stdio-not-connected.json")
	r := decode(t, w.hook(t, "PostToolUseFailure", marshal(failP)))
	for what, text := range map[string]string{"advice": r.HookSpecificOutput.AdditionalContext, "user line": r.SystemMessage} {
		if strings.Contains(text, "/mcp reconnect tiny") || !strings.Contains(text, "headless (-p) session cannot reconnect it") {
			t.Errorf("%s in a headless session: %q", what, text)
		}
	}
	pre := tinyCall(t, "PreToolUse.mcp.json", failP["session_id"])
	r = decode(t, w.hook(t, "PreToolUse", marshal(pre)))
	if n := r.HookSpecificOutput.AdditionalContext; !strings.Contains(n, "was found disconnected") || strings.Contains(n, "/mcp reconnect tiny") {
		t.Errorf("PreToolUse notice in a headless session: %q", n)
	}
}

// TestSessionStartHeadlessUnapproved: Claude Code starts .mcp.json servers
// nobody approved in `claude -p`; SessionStart says so there (and only
// there), and never counts them as servers wrap should protect.
func TestSessionStartHeadlessUnapproved(t *testing.T) {
	payload := marshal(sharedPayload(t, "SessionStart.json"))
	w := newWorld(t)
	if err := os.WriteFile(filepath.Join(w.project, ".mcp.json"), []byte(`{"mcpServers":{"repo":{"command":"repo-server"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := w.hook(t, "SessionStart", payload); len(out) != 0 {
		t.Fatalf("interactive: got %s, want nothing (Claude Code asks before starting it)", out)
	}
	w.extra = headless
	want := "mcp-heal: approve them interactively, then run /mcp-heal wrap --all: MCP servers never approved in this project, which this headless (-p) session runs anyway, unprotected: repo."
	if got := decode(t, w.hook(t, "SessionStart", payload)).SystemMessage; got != want {
		t.Fatalf("headless:\n got %q\nwant %q", got, want)
	}
}

// TestPreToolUseFIFOIncidents: a FIFO planted as incidents.jsonl does not
// hold PreToolUse (issue 16 item 7): the hook answers at once, as if
// there were no incidents, where it used to wait for a writer until
// Claude Code's timeout.
func TestPreToolUseFIFOIncidents(t *testing.T) {
	w := newWorld(t)
	dir := filepath.Join(w.state, "mcp-heal")
	for _, d := range []string{dir, filepath.Join(dir, "attention")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "incidents.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "attention", "server-everything"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t), "hook", "PreToolUse")
	cmd.Env, cmd.Dir = w.env(), w.project
	cmd.Stdin = bytes.NewReader(marshal(sharedPayload(t, "PreToolUse.mcp.json")))
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatal("PreToolUse still blocked on the FIFO after 15 s")
	}
	if err != nil || len(out) != 0 {
		t.Fatalf("PreToolUse: %v, %q; want exit 0 and nothing", err, out)
	}
}

// TestSessionStartConflictingScopesOnce: the first session after wrap
// protected a project server with a local copy hears, once, that Claude
// Code's "[Conflicting scopes]" warning about it is expected.
func TestSessionStartConflictingScopesOnce(t *testing.T) {
	payload := marshal(sharedPayload(t, "SessionStart.json"))
	w := newWorld(t)
	if err := os.WriteFile(filepath.Join(w.project, ".mcp.json"), []byte(`{"mcpServers":{"tiny":{"command":"tiny-server"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".claude.json"), []byte(`{"projects":{`+strconvQuote(w.project)+`:{"hasTrustDialogAccepted":true,"enabledMcpjsonServers":["tiny"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.Binary(t), "wrap", "--all")
	cmd.Env, cmd.Dir = w.env(), w.project
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "tiny: wrapped (project") {
		t.Fatalf("wrap: %v\n%s", err, out)
	}
	want := `mcp-heal: nothing to run: MCP servers protected by a local copy of their .mcp.json entry: tiny (/mcp and 'claude mcp list' warn "[Conflicting scopes]" about them: expected, keep both entries).`
	if got := decode(t, w.hook(t, "SessionStart", payload)).SystemMessage; got != want {
		t.Fatalf("first session after wrap:\n got %q\nwant %q", got, want)
	}
	if out := w.hook(t, "SessionStart", payload); len(out) != 0 {
		t.Fatalf("second session: got %s, want nothing", out)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestContextOncePerTurn (issue 24 item 3): 21 calls to a dead server
// failing at once in one turn give the model one context block, not 21
// copies (Claude Code sends one role "system" block per hook run); the
// next turn hears of it again.
func TestContextOncePerTurn(t *testing.T) {
	w := newWorld(t)
	w.userConfig(t, `{}`)
	fail := sharedPayload(t, "PostToolUseFailure.stdio-not-connected.json")
	const calls = 21
	var wg sync.WaitGroup
	told := make(chan string, calls)
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			told <- decode(t, w.hook(t, "PostToolUseFailure", marshal(fail))).HookSpecificOutput.AdditionalContext
		}()
	}
	wg.Wait()
	close(told)
	n := 0
	for c := range told {
		if c != "" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d failure hooks of one turn gave the model %d context blocks, want 1", calls, n)
	}
	fail["prompt_id"] = "the next turn"
	if c := decode(t, w.hook(t, "PostToolUseFailure", marshal(fail))).HookSpecificOutput.AdditionalContext; !strings.Contains(c, "is disconnected") {
		t.Fatalf("the next turn: got %q, want the advice again", c)
	}
}
