//go:build unix

package keep_test

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	b.handshake()
	if got := int(b.info().Get("pid").Int()); got != pid {
		t.Fatalf("re-attached to pid %d, want the kept %d", got, pid)
	}
	if got := b.tool("counter_increment", `{}`); got != "2" {
		t.Errorf("counter after re-attach: %q, want 2 (state kept)", got)
	}
	b.kill()
	e.keptRecord(t)
	e.stop(t)
}
