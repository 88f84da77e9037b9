//go:build unix

package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The shim's rules for the stateless era (2026-07-28), each with a real
// shim, real servers and a SIGKILL.

// shimSession starts `mcp-heal shim` with cmdline after "--", opens a
// stateless-era session (server/discover) and returns the client, the
// shim's pid and its XDG_STATE_HOME.
func shimSession(t *testing.T, cmdline ...string) (*example.Client, int, string) {
	t.Helper()
	c, shim, xdg := openSession(t, "stateless", shimmed(t, "stateless", cmdline...))
	return c, shim.pid(), xdg
}

// fixtureSession is shimSession in front of the Go SDK fixture (goFixture),
// with a context for the test's calls that ends after d.
func fixtureSession(t *testing.T, d time.Duration) (*example.Client, int, string, context.Context) {
	t.Helper()
	c, shim, xdg := shimSession(t, goFixture(t))
	return c, shim, xdg, testCtx(t, d)
}

// exampleSession is shimSession in front of the binary's own example
// server in the stateless era, with a context for the test's calls that
// ends after d.
func exampleSession(t *testing.T, d time.Duration) (*example.Client, int, string, context.Context) {
	t.Helper()
	c, shim, xdg := shimSession(t, testenv.Binary(t), "example-server", "--era", "stateless")
	return c, shim, xdg, testCtx(t, d)
}

// tasksSession is shimSession in front of the tests' own tasks server
// (tasksServer), with a context for the test's calls that ends after d.
func tasksSession(t *testing.T, d time.Duration) (*example.Client, int, string, context.Context) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, shim, xdg := shimSession(t, "env", roleEnv+"=tasks-server", self)
	return c, shim, xdg, testCtx(t, d)
}

// respawn SIGKILLs the shim's server and waits until the shim has started
// the next one.
func respawn(t *testing.T, xdg string, shim int) {
	t.Helper()
	old := shimChild(t, xdg, shim, 0)
	kill9(t, old)
	shimChild(t, xdg, shim, old)
}

// errData is the field of an error response's data ("" when r is no
// error or has no such field).
func errData(r example.Response, field string) string {
	if r.Error == nil {
		return ""
	}
	return gjson.GetBytes(r.Error.Data, field).Str
}

// testCtx is a context for a test's calls that ends after d, or with the
// test.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestStatelessPingIsTheServers: the stateless era has no ping (a server
// answers -32601). While the server restarts, a handshake-era ping is
// answered by the shim so the client does not think the connection dead;
// a stateless-era ping must instead get the server's own answer, not an
// empty result the server would never have given (conformance
// server-stateless, sep-2575-http-server-method-not-found-404-ping, failed
// through the shim for this).
func TestStatelessPingIsTheServers(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	fixture := goFixture(t)
	// Every start after the first takes a second, so the ping below
	// arrives while the shim waits for the restarted server.
	slow := `if mkdir "$0/started" 2>/dev/null; then exec "$1"; fi; sleep 1; exec "$1"`
	c, shim, xdg := shimSession(t, "sh", "-c", slow, t.TempDir(), fixture)
	ctx := testCtx(t, 30*time.Second)
	r, err := c.Call(ctx, "ping", nil)
	if err != nil || r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("stateless ping to the fixture: %v %s; want its -32601", err, r.Raw)
	}
	kill9(t, shimChild(t, xdg, shim, 0))
	time.Sleep(200 * time.Millisecond) // the shim has seen the death and restarts
	start := time.Now()
	r, err = c.Call(ctx, "ping", nil)
	if err != nil || r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("stateless ping while the server restarts: %v %s; want the restarted server's -32601, not an answer of the shim's own", err, r.Raw)
	}
	t.Logf("stateless ping during the restart: the server's %d after %v", r.Error.Code, time.Since(start).Round(time.Millisecond))
}

// TestStatelessRespawnRediscovers: a server that speaks only 2026-07-28 is
// restarted and asked the client's server/discover before any queued call
// reaches it, so a restart that comes up broken (here: a process that dies
// on the first byte it reads) is a failed start and not the grave of a
// non-idempotent call; the client sees its call run once, on the next
// server.
func TestStatelessRespawnRediscovers(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	bin := testenv.Binary(t)
	dir := t.TempDir()
	counter := filepath.Join(dir, "counter")
	// Start 2 dies on its first byte of input; the others are the example
	// server speaking the stateless era only.
	starts := `n=$(cat "$0/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0/n"
if [ $n -eq 2 ]; then head -c 1 >/dev/null; exit 1; fi
exec "$1" example-server --era stateless --state-file "$2"`
	c, shim, xdg := shimSession(t, "sh", "-c", starts, dir, bin, counter)
	ctx := testCtx(t, 60*time.Second)
	if r, err := c.Call(ctx, "tools/list", nil); err != nil || r.Error != nil {
		t.Fatalf("tools/list: %v %s", err, r.Raw)
	}
	// The call comes once the shim has seen the death (so it is not
	// written to the dead server's pipe) and started the next server.
	respawn(t, xdg, shim)
	r, err := c.CallTool(ctx, example.ToolCounterIncrement, nil)
	if err != nil || r.Error != nil {
		t.Fatalf("counter_increment queued across the restarts: %v %s; want it run once on a working server", err, r.Raw)
	}
	if n, err := example.ReadCounter(counter); err != nil || n != 1 {
		t.Errorf("counter after one call: %d, %v; want 1", n, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "n"))
	if n := strings.TrimSpace(string(b)); n != "3" {
		t.Errorf("server starts: %s, want 3 (the broken second start was caught by server/discover)", n)
	}
}

// TestInputRequiredAcrossRestart: a multi round-trip call (SEP-2322) of the
// Go SDK fixture. The input-required result is forwarded as the success it
// is; the server dies between the rounds; the client's next round, with the
// server's requestState, is served by the restarted server.
func TestInputRequiredAcrossRestart(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	c, shim, xdg, ctx := fixtureSession(t, 30*time.Second)
	const tool = "test_input_required_result_multi_round"
	r, err := c.CallTool(ctx, tool, nil)
	if err != nil || r.Error != nil || gjson.GetBytes(r.Result, "resultType").Str != "input_required" {
		t.Fatalf("round 1: %v %s; want an input-required result", err, r.Raw)
	}
	for round := 2; ; round++ {
		if round > 5 {
			t.Fatalf("still input-required after 4 rounds: %s", r.Raw)
		}
		state := gjson.GetBytes(r.Result, "requestState").Str
		responses := map[string]any{}
		gjson.GetBytes(r.Result, "inputRequests").ForEach(func(k, _ gjson.Result) bool {
			responses[k.Str] = map[string]any{"action": "accept", "content": map[string]any{"name": "mcp-heal", "ok": true}}
			return true
		})
		// The server dies between the rounds, as when the user takes a
		// while to answer; the next round comes once the shim restarted it.
		respawn(t, xdg, shim)
		r, err = c.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{},
			"inputResponses": responses, "requestState": state})
		if err != nil || r.Error != nil {
			t.Fatalf("round %d after a restart: %v %s", round, err, r.Raw)
		}
		if gjson.GetBytes(r.Result, "resultType").Str != "input_required" {
			break
		}
	}
	if gjson.GetBytes(r.Result, "isError").Bool() || !strings.Contains(string(r.Result), "mcp-heal") {
		t.Fatalf("final round: %s; want the tool's result with the name given in round 1", r.Raw)
	}
}

// TestLostContinuationSaysStartAgain: a round of a multi round-trip call
// to a tool that is not safe to re-send, lost with its server, gets the
// shim's one error, which says to start the call again from the first
// round (the restarted server may not accept the dead one's requestState).
func TestLostContinuationSaysStartAgain(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	c, shim, xdg, ctx := exampleSession(t, 30*time.Second)
	if r, err := c.Call(ctx, "tools/list", nil); err != nil || r.Error != nil {
		t.Fatalf("tools/list: %v %s", err, r.Raw)
	}
	child := shimChild(t, xdg, shim, 0)
	done := make(chan example.Response, 1)
	go func() {
		r, _ := c.Call(ctx, "tools/call", map[string]any{"name": example.ToolCounterIncrement, "arguments": map[string]any{"delay_ms": 3000},
			"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}, "requestState": "round=2"})
		done <- r
	}()
	time.Sleep(500 * time.Millisecond)
	kill9(t, child)
	r := <-done
	if r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "start the call again from the first round") {
		t.Fatalf("continuation lost with its server: %s; want -32603 saying to start the call again", r.Raw)
	}
	t.Logf("lost continuation: %s (%s)", r.Error.Message, errData(r, "reason"))
}

// TestStatelessListenSurvivesRestart: a subscriptions/listen stream passes
// through unchanged (the server's acknowledgement carries the client's own
// request id as subscriptionId) and is opened again on the restarted
// server under the same id, so the client's stream goes on.
func TestStatelessListenSurvivesRestart(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	c, shim, xdg, ctx := exampleSession(t, 30*time.Second)
	go c.Call(ctx, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"example://counter"}, "toolsListChanged": true}})
	ack := func(what string) string {
		t.Helper()
		for {
			select {
			case n := <-c.Notifications():
				if gjson.GetBytes(n, "method").Str == "notifications/subscriptions/acknowledged" {
					return subscriptionID(n)
				}
			case <-ctx.Done():
				t.Fatalf("no acknowledgement of the listen stream %s", what)
			}
		}
	}
	first := ack("from the first server")
	kill9(t, shimChild(t, xdg, shim, 0))
	if again := ack("from the restarted server"); again != first || first == "" {
		t.Fatalf("listen stream after the restart acknowledged as %s, first as %s; want the same subscription id", again, first)
	}
}

// TestBridgeStatelessInitialize: through the bridge, an initialize that
// carries the 2026-07-28 _meta is a request of that era like any other: it
// reaches the fixture's stateless HTTP server with that era's headers, and
// the client gets the server's own -32601 (over HTTP, 404: initialize was
// removed by SEP-2575), not the header-mismatch -32020 the server gave the
// header-less request the bridge used to send (conformance
// server-stateless, sep-2575-http-server-method-not-found-404-initialize).
func TestBridgeStatelessInitialize(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	url := startGoFixtureHTTP(t, false)
	bridge := startStdio(t, "bridge", []string{"XDG_STATE_HOME=" + t.TempDir()}, testenv.Binary(t), "shim", "--name", "bridge", "--url", url)
	c := example.NewClient(bridge.out, bridge.in)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "interop", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	r, err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": "2026-07-28", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "interop", "version": "1"}, "_meta": meta})
	if err != nil || r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("stateless-era initialize through the bridge: %v %s; want the server's -32601", err, r.Raw)
	}
}
