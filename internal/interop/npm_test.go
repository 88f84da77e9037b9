//go:build unix

package interop

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// shimmed returns the command line that runs server behind mcp-heal shim.
func shimmed(t *testing.T, name string, server ...string) []string {
	return append([]string{testenv.Binary(t), "shim", "--name", name, "--"}, server...)
}

func wantOK(t *testing.T, what string, r reply) {
	t.Helper()
	if !r.OK {
		t.Fatalf("%s: got %s, want success", what, r)
	}
}

// TestEverythingThroughShimSurvivesKill9 drives server-everything through the
// shim with the official TypeScript SDK client and kills the server three
// ways: while idle, during a read-only call, and during a non-idempotent
// call that is waiting on the client.
func TestEverythingThroughShimSurvivesKill9(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	everything := tsEverything(t)
	xdg := t.TempDir()
	c := startTSClient(t, shimmed(t, "everything", everything), map[string]string{"XDG_STATE_HOME": xdg})

	shim := c.connect()
	wantOK(t, "tools/list", c.do(map[string]any{"op": "listTools"}))
	wantOK(t, "echo", c.call("echo", map[string]any{"message": "before"}))

	// 1. Killed while idle: the next call succeeds.
	child := shimChild(t, xdg, shim, 0)
	kill9(t, child)
	r := c.call("echo", map[string]any{"message": "after kill"})
	wantOK(t, "echo after kill -9", r)
	if !strings.Contains(string(r.Result), "after kill") {
		t.Errorf("echo after kill -9: got %s", r.Result)
	}
	child2 := shimChild(t, xdg, shim, child)

	// 2. Killed during a read-only call (readOnlyHint): re-sent, succeeds.
	ch := c.start(map[string]any{"op": "call", "name": "trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 2}})
	time.Sleep(300 * time.Millisecond)
	kill9(t, child2)
	r = c.wait(ch, 30*time.Second)
	wantOK(t, "long-running read-only call across kill -9", r)
	child3 := shimChild(t, xdg, shim, child2)

	// 3. Killed during a non-idempotent call (trigger-sampling-request has
	// idempotentHint false) while its sampling request waits on the client:
	// one -32603 within a second, and the sampling request is cancelled.
	ch = c.start(map[string]any{"op": "call", "name": "trigger-sampling-request", "args": map[string]any{"prompt": "hi", "maxTokens": 5}})
	c.waitEvent("sampling", 15*time.Second)
	killed := kill9(t, child3)
	r = c.wait(ch, 10*time.Second)
	if r.OK || r.Error == nil || r.Error.Code != -32603 {
		t.Fatalf("non-idempotent call across kill -9: got %s, want error -32603", r)
	}
	if d := r.at.Sub(killed); d > time.Second {
		t.Errorf("-32603 arrived %v after kill -9, want < 1s", d)
	} else {
		t.Logf("non-idempotent call failed %v after kill -9: %s", d.Round(time.Millisecond), r.Error.Message)
	}
	if !strings.Contains(strings.ToLower(r.Error.Message), "may or may not have taken effect") {
		t.Errorf("error message does not say the call may have taken effect: %q", r.Error.Message)
	}
	c.waitEvent("sampling-cancelled", 5*time.Second)

	wantOK(t, "echo after the failed call", c.call("echo", map[string]any{"message": "still here"}))
}

// TestEverythingDirectKill9 is the baseline: the same client connected
// straight to server-everything loses the connection for good.
func TestEverythingDirectKill9(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	everything := tsEverything(t)
	c := startTSClient(t, []string{everything}, nil)
	server := c.connect()
	wantOK(t, "echo", c.call("echo", map[string]any{"message": "x"}))
	kill9(t, server)
	c.waitEvent("closed", 5*time.Second)
	if r := c.call("echo", map[string]any{"message": "y"}); r.OK {
		t.Fatalf("echo after kill -9 of a directly connected server succeeded: %s", r)
	} else {
		t.Logf("directly connected, after kill -9: %s", r)
	}
}

// TestMemoryThroughShimSurvivesKill9: server-memory keeps its graph in
// MEMORY_FILE_PATH, so what a call wrote before the kill is there after it.
func TestMemoryThroughShimSurvivesKill9(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	memory := testenv.NPMBin(t, "mcp-server-memory", npmClientPkgs...)
	xdg := t.TempDir()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	c := startTSClient(t, shimmed(t, "memory", memory), map[string]string{"XDG_STATE_HOME": xdg, "MEMORY_FILE_PATH": file})
	shim := c.connect()
	wantOK(t, "tools/list", c.do(map[string]any{"op": "listTools"}))
	wantOK(t, "create_entities", c.call("create_entities", map[string]any{"entities": []map[string]any{
		{"name": "mcp-heal", "entityType": "project", "observations": []string{"survives kill -9"}}}}))

	for i := 0; i < 2; i++ {
		child := shimChild(t, xdg, shim, 0)
		kill9(t, child)
		r := c.call("read_graph", nil)
		wantOK(t, "read_graph after kill -9", r)
		if !strings.Contains(string(r.Result), "survives kill -9") {
			t.Errorf("read_graph after kill -9: entity missing: %s", r.Result)
		}
		shimChild(t, xdg, shim, child)
	}
	wantOK(t, "add_observations", c.call("add_observations", map[string]any{"observations": []map[string]any{
		{"entityName": "mcp-heal", "contents": []string{"and keeps going"}}}}))
}
