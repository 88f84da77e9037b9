//go:build unix

package keep_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// TestLogLevelOutlivesItsClient pins the documented limit (docs/keeper.md,
// "Log level"): MCP can set a log level but neither read it nor return to
// the server's default, so a kept server keeps the level the previous
// client set; a re-attached client that never sends logging/setLevel gets
// notifications/message at that level, and one that sends it gets its own.
func TestLogLevelOutlivesItsClient(t *testing.T) {
	t.Parallel()
	e, a := newKept(t)
	if r, _ := a.call("logging/setLevel", `{"level":"debug"}`); !r.Get("result").Exists() {
		t.Fatalf("setLevel: %s", r.Raw)
	}
	pid := a.info().Get("pid").Int()
	a.kill()
	e.keptRecord(t)

	b := e.shim(t, "1m")
	b.handshake()
	info := b.info()
	if info.Get("pid").Int() != pid {
		t.Fatalf("re-attached to pid %d, want the kept %d", info.Get("pid").Int(), pid)
	}
	if got := info.Get("logLevel").String(); got != "debug" {
		t.Errorf("log level after re-attach: %q, want the previous client's %q", got, "debug")
	}
	if got := messages(b); got == 0 {
		t.Errorf("a call after re-attach sent no notifications/message, want those of level debug")
	}
	if r, _ := b.call("logging/setLevel", `{"level":"error"}`); !r.Get("result").Exists() {
		t.Fatalf("setLevel: %s", r.Raw)
	}
	if got := b.info().Get("logLevel").String(); got != "error" {
		t.Errorf("log level after the new client's setLevel: %q, want %q", got, "error")
	}
	if got := messages(b); got != 0 {
		t.Errorf("at level error a call sent %d notifications/message (debug, info), want 0", got)
	}
	e.stop(t)
}

// messages counts the notifications/message that come with a call of
// counter_increment (the example server logs it at debug and info).
func messages(c *client) int {
	c.t.Helper()
	r, notes := c.call("tools/call", `{"name":"counter_increment","arguments":{}}`)
	if !r.Get("result").Exists() {
		c.t.Fatalf("counter_increment: %s", r.Raw)
	}
	n := 0
	for _, l := range notes {
		if strings.Contains(gjson.Get(l, "method").String(), "notifications/message") {
			n++
		}
	}
	return n
}

// TestShimKilledMidWrite: a shim killed in the middle of writing a large
// message leaves a partial line in the kept server's stdin. The guardian
// ends that line before anyone writes again, so the next shim's first
// request is not glued to it: it is answered, and the server stays the
// same warm process.
func TestShimKilledMidWrite(t *testing.T) {
	t.Parallel()
	e, a := newKept(t)
	a.tool("counter_increment", `{}`)
	pid := int(a.info().Get("pid").Int())
	// The server stops reading: the shim's write of a message far larger
	// than the pipe blocks with part of it in the pipe.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	a.send(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 1<<20) + `"}}}`)
	// Killed well before the shim's second check could find the server
	// still stopped and kill it (two ticks of 750 ms: internal/shim,
	// hang.go).
	time.Sleep(100 * time.Millisecond)
	a.kill()
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	e.keptRecord(t)

	b := e.shim(t, "1m")
	b.reattached(pid, "2", "after the shim killed mid-write")
	b.kill()
	e.keptRecord(t)
	e.stop(t)
}
