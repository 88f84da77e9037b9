//go:build unix

package interop

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
)

// Issue 34 over stdio: the 2026-07-28 rules a respawn must keep, through
// the real binary in front of the Go SDK v1.8.0 fixture (everything-server
// on stdio, which answers server/discover and serves the stateless era).

// subscriptionID is the io.modelcontextprotocol/subscriptionId of a
// notification on a listen stream ("" when it has none).
func subscriptionID(n []byte) string {
	return gjson.GetBytes(n, `params._meta.io\.modelcontextprotocol/subscriptionId`).Raw
}

// TestGoSDKListenReopenedAfterRespawn: an open subscriptions/listen stream
// is re-established on the restarted server (the 2026-07-28 stdio
// transport: after an unexpected exit the client SHOULD restart the
// server, and active listen streams MUST be re-established). The shim
// re-sends the client's own listen request, under the client's id, to
// the new process: the Go SDK acknowledges it again with that id as
// subscriptionId, and its resources/updated (the fixture's watched
// resource, every 3 s) reach the client tagged with it, so the client's
// stream goes on without the client doing anything.
//
// It passed before issue 34's work too: subscriptions/listen was already
// among the methods the shim re-sends (session.go, retryable), with the
// client's id kept (the entry is re-sent as received). What it adds is
// the Go SDK's own listen: its acknowledgement and its notifications,
// from the new process.
func TestGoSDKListenReopenedAfterRespawn(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	c, shim, xdg, ctx := fixtureSession(t, 60*time.Second)
	const uri = "test://watched-resource"
	listen := make(chan []byte, 1)
	go func() {
		r, _ := c.Call(ctx, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{uri}}})
		listen <- r.Raw
	}()
	// next waits for a notification of method on the listen stream.
	next := func(method, what string) []byte {
		t.Helper()
		for {
			select {
			case n := <-c.Notifications():
				if gjson.GetBytes(n, "method").Str == method {
					return n
				}
			case r := <-listen:
				t.Fatalf("the listen request was answered %s: %s; want the stream kept open", what, r)
			case <-ctx.Done():
				t.Fatalf("no %s %s", method, what)
			}
		}
	}
	ack := next("notifications/subscriptions/acknowledged", "from the first server")
	id := subscriptionID(ack)
	if id == "" || !gjson.GetBytes(ack, "params.notifications.resourceSubscriptions").IsArray() {
		t.Fatalf("acknowledgement %s: want the subscription id and the resource", ack)
	}
	if u := next("notifications/resources/updated", "from the first server"); subscriptionID(u) != id {
		t.Fatalf("update %s on the stream %s", u, id)
	}
	old := shimChild(t, xdg, shim, 0)
	killed := kill9(t, old)
	again := next("notifications/subscriptions/acknowledged", "from the restarted server")
	reopened := time.Since(killed)
	newPID := shimChild(t, xdg, shim, old)
	if subscriptionID(again) != id {
		t.Fatalf("the restarted server acknowledged %s; want the client's stream %s again", again, id)
	}
	u := next("notifications/resources/updated", "from the restarted server")
	if subscriptionID(u) != id {
		t.Fatalf("update %s after the restart; want it on the stream %s", u, id)
	}
	t.Logf("listen stream %s: server %d killed, acknowledged again by %d %v after the kill, updates go on", id, old, newPID, reopened.Round(time.Millisecond))
}

// TestTasksGoneAfterRespawn: the tasks extension through the shim, with
// the tests' own tasks server (tasksServer). A call answered with a task
// handle is done: its answer reaches the client at once, and a tasks/get
// of a live task gets the server's own answer. When the server is killed,
// its in-memory tasks die with it: a tasks/get in flight at the kill, and
// a tasks/get, tasks/update or tasks/cancel sent after the restart for a
// task of the dead process, each get one error saying the server was
// restarted and the task is gone (data.reason "task-gone"), quoting the
// new process's own refusal. On the code before, the one in flight got
// "tasks/get is not safe to re-send ... may or may not have taken
// effect" and the later ones the new server's bare -32602 "unknown
// task". A task the server keeps outside its process (durable) is still
// answered by the new process, and a task of the new process is served
// as before.
func TestTasksGoneAfterRespawn(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	c, shim, xdg, ctx := tasksSession(t, 60*time.Second)
	start := func(args map[string]any) string {
		t.Helper()
		r, err := c.CallTool(ctx, "work", args)
		if err != nil || r.Error != nil || gjson.GetBytes(r.Result, "resultType").Str != "task" {
			t.Fatalf("tools/call work: %v %s; want a task handle", err, r.Raw)
		}
		return gjson.GetBytes(r.Result, "taskId").Str
	}
	long := start(map[string]any{"ms": 60000})
	durable := start(map[string]any{"ms": 60000, "durable": true})
	if r, err := c.Call(ctx, "tasks/get", map[string]any{"taskId": long}); err != nil || gjson.GetBytes(r.Result, "status").Str != "working" {
		t.Fatalf("tasks/get of a live task: %v %s; want the server's working", err, r.Raw)
	}
	held := start(map[string]any{"hold": true})
	inFlight := make(chan example.Response, 1)
	go func() {
		r, _ := c.Call(ctx, "tasks/get", map[string]any{"taskId": held})
		inFlight <- r
	}()
	time.Sleep(300 * time.Millisecond) // the tasks/get reaches the server
	old := shimChild(t, xdg, shim, 0)
	kill9(t, old)
	gone := func(what string, r example.Response, task string) {
		t.Helper()
		if r.Error == nil || r.Error.Code != -32603 || errData(r, "reason") != "task-gone" || errData(r, "task") != task ||
			!strings.Contains(r.Error.Message, "was restarted") || !strings.Contains(r.Error.Message, "nothing to wait for") ||
			!strings.Contains(r.Error.Message, "«unknown task "+task+"»") {
			t.Fatalf("%s: %s; want -32603 task-gone saying the server was restarted and the task %s is gone", what, r.Raw, task)
		}
	}
	select {
	case r := <-inFlight:
		gone("tasks/get in flight at the kill", r, held)
		t.Logf("in flight: %s", r.Error.Message)
	case <-ctx.Done():
		t.Fatal("the tasks/get in flight at the kill was never answered")
	}
	shimChild(t, xdg, shim, old)
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		r, err := c.Call(ctx, m, map[string]any{"taskId": long})
		if err != nil {
			t.Fatal(err)
		}
		gone(m+" after the restart", r, long)
	}
	if r, err := c.Call(ctx, "tasks/get", map[string]any{"taskId": durable}); err != nil || gjson.GetBytes(r.Result, "status").Str != "completed" {
		t.Fatalf("tasks/get of a task the server keeps outside its process: %v %s; want the new process's completed", err, r.Raw)
	}
	fresh := start(map[string]any{"ms": 0})
	if r, err := c.Call(ctx, "tasks/get", map[string]any{"taskId": fresh}); err != nil || gjson.GetBytes(r.Result, "status").Str != "completed" {
		t.Fatalf("tasks/get of the new process's task: %v %s; want its completed", err, r.Raw)
	}
}

// TestRequestStateGoneAfterRespawn: a multi round-trip call's requestState
// minted by a server process that ended is forwarded to the new one (a
// stateless server continues from it), and when the new process refuses
// it, the client gets mcp-heal's one error, quoting the server: it was
// restarted, start the call again from the first round (issue 34). A
// requestState of the new process completes as the server answers. On
// the code before, the client got the server's bare -32602.
func TestRequestStateGoneAfterRespawn(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	c, shim, xdg, ctx := tasksSession(t, 60*time.Second)
	first := func() string {
		t.Helper()
		r, err := c.CallTool(ctx, "ask", map[string]any{})
		if err != nil || r.Error != nil || gjson.GetBytes(r.Result, "resultType").Str != "input_required" {
			t.Fatalf("tools/call ask: %v %s; want input_required", err, r.Raw)
		}
		return gjson.GetBytes(r.Result, "requestState").Str
	}
	round := func(rs string) example.Response {
		t.Helper()
		r, err := c.Call(ctx, "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{},
			"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "x"}}}, "requestState": rs})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if rs := first(); gjson.GetBytes(round(rs).Result, "content.0.text").Str != "done "+rs {
		t.Fatalf("a round on the process that minted its requestState did not complete")
	}
	old := first()
	respawn(t, xdg, shim)
	r := round(old)
	if r.Error == nil || r.Error.Code != -32603 || errData(r, "reason") != "state-gone" || !strings.Contains(r.Error.Message, "was restarted") ||
		!strings.Contains(r.Error.Message, "start the call again from the first round") || !strings.Contains(r.Error.Message, "«unknown requestState "+old+"»") {
		t.Fatalf("a round carrying the dead process's requestState: %s; want -32603 state-gone saying the server was restarted", r.Raw)
	}
	t.Logf("the round after the restart: %s", r.Error.Message)
	if rs := first(); gjson.GetBytes(round(rs).Result, "content.0.text").Str != "done "+rs {
		t.Fatalf("a round on the new process with its own requestState did not complete")
	}
}

// TestGoSDKInputRequiredKilledMidRound: a multi round-trip call (SEP-2322)
// of the Go SDK fixture whose server dies while a round is in flight.
// Each round is a new request with a new id, passed through as a call of
// its own (no duplicate, no hang); the round the server died under is a
// tools/call of a tool with no annotations, so it is not re-sent, and its
// one error says to start the call again from the first round. Started
// again, the call runs to its end on the new process. (Between rounds, a
// requestState of the dead process is forwarded and the new process
// continues the call: TestInputRequiredAcrossRestart; the Go SDK hands
// requestState to the tool untouched, docs/shim.md rule 4.) It passed on
// the code before: the rules were already these; it shows them with the
// Go SDK's own multi round-trip tool.
func TestGoSDKInputRequiredKilledMidRound(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	c, shim, xdg, ctx := fixtureSession(t, 30*time.Second)
	const tool = "test_input_required_result_multi_round"
	answers := func(r example.Response) map[string]any {
		out := map[string]any{}
		gjson.GetBytes(r.Result, "inputRequests").ForEach(func(k, _ gjson.Result) bool {
			out[k.Str] = map[string]any{"action": "accept", "content": map[string]any{"name": "mcp-heal", "color": "green"}}
			return true
		})
		return out
	}
	round := func(r example.Response) (example.Response, error) {
		return c.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{},
			"inputResponses": answers(r), "requestState": gjson.GetBytes(r.Result, "requestState").Str})
	}
	first, err := c.CallTool(ctx, tool, nil)
	if err != nil || first.Error != nil || gjson.GetBytes(first.Result, "resultType").Str != "input_required" {
		t.Fatalf("round 1: %v %s; want an input-required result", err, first.Raw)
	}
	// Round 2 reaches a stopped server (it reads nothing), which is then
	// killed: the round was in flight when its server died.
	old := shimChild(t, xdg, shim, 0)
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	lost := make(chan example.Response, 1)
	go func() {
		r, _ := round(first)
		lost <- r
	}()
	time.Sleep(200 * time.Millisecond) // less than the shim's two stop checks (750 ms apart)
	kill9(t, old)
	r := <-lost
	if r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "start the call again from the first round") {
		t.Fatalf("the round in flight at the kill: %s; want -32603 saying to start the call again", r.Raw)
	}
	t.Logf("round 2 in flight at the kill: %s", r.Error.Message)
	shimChild(t, xdg, shim, old)
	r, err = c.CallTool(ctx, tool, nil)
	for n := 1; err == nil && r.Error == nil && gjson.GetBytes(r.Result, "resultType").Str == "input_required"; n++ {
		if n > 4 {
			t.Fatalf("still input-required after %d rounds: %s", n, r.Raw)
		}
		r, err = round(r)
	}
	if err != nil || r.Error != nil || gjson.GetBytes(r.Result, "isError").Bool() || !strings.Contains(string(r.Result), "mcp-heal") {
		t.Fatalf("the call started again on the new process: %v %s; want the tool's result with the name given", err, r.Raw)
	}
}
