//go:build unix

package shim

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Rule 1: transparent proxy.
func TestTransparentProxy(t *testing.T) {
	h := newHarness(t, hopt{server: func(o *example.Options, _ string) { o.JunkStdout = true }})
	h.handshake()

	t.Run("ids and bytes kept exact", func(t *testing.T) {
		ch := make(chan []byte, 1)
		id := `"\u00e9t\u00e9-1"`
		h.mu.Lock()
		h.waiters[id] = ch
		h.mu.Unlock()
		h.send(`{ "jsonrpc" : "2.0", "id" : ` + id + ` , "method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo"}}}`)
		r := h.wait(ch, "echo")
		if got := r.Get("id").Raw; got != id {
			t.Errorf("id: got %s, want %s", got, id)
		}
		if got := r.Get("result.content.0.text").String(); got != "héllo" {
			t.Errorf("text: got %q, want %q", got, "héllo")
		}
	})

	t.Run("junk from the server is dropped and logged", func(t *testing.T) {
		// The reader fails the test on any non-JSON line; the server wrote
		// junk before the tool's result above.
		testenv.WaitFor(t, 5*time.Second, "a log of the dropped line", func() bool {
			return strings.Contains(h.logs.String(), "dropped a line from the server that is not JSON")
		})
	})

	t.Run("invalid client input gets a parse error", func(t *testing.T) {
		tap := make(chan []byte, 10)
		h.mu.Lock()
		h.raw = tap
		h.mu.Unlock()
		h.send(`{"this is": not json`)
		var got gjson.Result
		select {
		case b := <-tap:
			got = gjson.ParseBytes(b)
		case <-time.After(5 * time.Second):
			t.Fatal("no reply to invalid input")
		}
		h.mu.Lock()
		h.raw = nil
		h.mu.Unlock()
		if got.Get("error.code").Int() != -32700 || got.Get("id").Type != gjson.Null {
			t.Errorf("got %s, want a -32700 error with a null id", got.Raw)
		}
		if r := h.tool("echo", `{"text":"still here"}`); r.Get("result.content.0.text").String() != "still here" {
			t.Errorf("after invalid input: got %s", r.Raw)
		}
	})

	t.Run("child stderr passes through", func(t *testing.T) {
		if !strings.Contains(h.stderr.String(), "example server starting") {
			t.Errorf("child stderr not passed through; got %q", h.stderr.String())
		}
	})
}

// Rule 3: respawn, replay of handshake and state, queue, local ping.
func TestRespawnReplaysSession(t *testing.T) {
	var g *gateDialer
	h := newHarness(t, hopt{dialer: func(d upstream.Dialer) upstream.Dialer {
		g = &gateDialer{Dialer: d, gate: make(chan struct{}), dials: make(chan int, 10)}
		return g
	}})
	h.handshake()
	// At "error" the server sends no log message of its own on a call.
	if r := h.call("logging/setLevel", `{"level":"error"}`); r.Get("error").Exists() {
		t.Fatalf("setLevel: %s", r.Raw)
	}
	h.call("resources/subscribe", `{"uri":"file:///a"}`)
	h.call("resources/subscribe", `{"uri":"file:///b"}`)
	h.call("resources/unsubscribe", `{"uri":"file:///b"}`)
	old := h.killChild()

	// While the server is down: ping answered locally and at once; a call
	// is queued, not failed.
	testenv.WaitFor(t, 5*time.Second, "the shim to see the death", func() bool { return h.childPID() == 0 })
	start := time.Now()
	if r := h.call("ping", ""); !r.Get("result").Exists() {
		t.Errorf("ping while down: got %s", r.Raw)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("local ping took %v", d)
	}
	_, queued := h.start("tools/call", `{"name":"echo","arguments":{"text":"queued"}}`)
	select {
	case b := <-queued:
		t.Fatalf("queued call answered while the server is down: %s", b)
	case <-time.After(100 * time.Millisecond):
	}
	close(g.gate)
	if r := h.wait(queued, "queued echo"); r.Get("result.content.0.text").String() != "queued" {
		t.Errorf("queued call: got %s", r.Raw)
	}
	h.waitUp(old)

	if n := h.countEvents("initialize "); n != 2 {
		t.Errorf("initialize sent %d times, want 2 (client's, then replay)", n)
	}
	if n := h.countEvents("initialized"); n != 2 {
		t.Errorf("initialized sent %d times, want 2", n)
	}
	if n := h.countEvents("setLevel error"); n != 2 {
		t.Errorf("setLevel replayed: seen %d, want 2", n)
	}
	if n := h.countEvents("subscribe file:///a"); n != 2 {
		t.Errorf("subscribe a: seen %d, want 2", n)
	}
	if n := h.countEvents("subscribe file:///b"); n != 1 {
		t.Errorf("subscribe b (unsubscribed): seen %d, want 1", n)
	}
	// Nothing but the answers the client asked for reached it.
	select {
	case b := <-h.other:
		t.Errorf("unexpected message to the client: %s", b)
	default:
	}
	if len(h.dups) > 0 {
		t.Errorf("duplicate responses: %v", h.dups)
	}
}

// A 64 MiB message passes intact both ways, the ceiling raised (its
// default is what Claude Code takes, 16 MiB - 64 KiB, both ways). The server is cat:
// it echoes the client's request back, which the shim forwards as a
// server->client request (id remapped), so the bytes cross the shim twice
// without a race-instrumented server slowing the test.
func TestHugeMessage(t *testing.T) {
	h := newHarness(t, hopt{command: []string{"cat"}, dialer: func(d upstream.Dialer) upstream.Dialer {
		d.(*proc.Dialer).Config.MaxMessage = 128 << 20
		return d
	}, opts: func(o *Options) { o.MaxMessage = 128 << 20 }})
	payload := strings.Repeat("y", 64<<20)
	start := time.Now()
	h.send(`{"jsonrpc":"2.0","id":"big","method":"x/echo","params":{"text":"` + payload + `"}}`)
	var b []byte
	select {
	case b = <-h.other:
	case <-time.After(2 * time.Minute):
		t.Fatal("64 MiB message did not come back within 2 minutes")
	}
	t.Logf("64 MiB round trip: %v (race detector on)", time.Since(start))
	want := `{"jsonrpc":"2.0","id":1,"method":"x/echo","params":{"text":"` + payload + `"}}`
	if len(b) != len(want) || string(b) != want {
		t.Errorf("got %d bytes, want %d (intact, id remapped)", len(b), len(want))
	}
}

// After a restart the shim lists the new server's tools: a changed catalog
// is announced to the client (when the server declared listChanged), an
// unchanged one is not.
func TestToolsChangedAfterRestart(t *testing.T) {
	for _, tt := range []struct {
		name   string
		faults example.Faults
		notify bool
	}{
		{"changed", example.Faults{NewToolAfter: 1}, true},
		{"unchanged", example.Faults{}, false},
		{"changed, not declared", example.Faults{NewToolAfter: 1, NoToolsListChanged: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, hopt{server: func(o *example.Options, _ string) {
				tt.faults.EventLog, tt.faults.TestTools = o.Faults.EventLog, true
				o.Faults = tt.faults
			}})
			h.handshake()
			old := h.killChild()
			h.waitUp(old)
			if r := h.tool("echo", `{"text":"x"}`); !r.Get("result").Exists() {
				t.Fatalf("after respawn: %s", r.Raw)
			}
			if n := h.countEvents("tools/list"); n != 2 {
				t.Errorf("tools/list seen %d times, want 2 (client's, then the refresh)", n)
			}
			var got []string
			for len(h.other) > 0 {
				got = append(got, gjson.GetBytes(<-h.other, "method").String())
			}
			if notified := len(got) == 1 && got[0] == "notifications/tools/list_changed"; notified != tt.notify || (!tt.notify && len(got) > 0) {
				t.Errorf("client got %v, want list_changed: %v", got, tt.notify)
			}
		})
	}
}
