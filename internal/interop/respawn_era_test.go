//go:build unix

package interop

import (
	"context"
	"testing"
	"time"

	"github.com/tidwall/gjson"
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
	fixture := goFixture(t)
	c, shim, xdg := shimSession(t, fixture)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
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
