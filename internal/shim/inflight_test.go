//go:build unix

package shim

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// Rule 4: every request in flight when the server dies gets exactly one
// outcome.
func TestInflightAtDeath(t *testing.T) {
	h := newHarness(t, hopt{})
	h.handshake()
	pid := h.waitUp(0)

	_, read := h.start("tools/call", `{"name":"slow","arguments":{"ms":400}}`)
	_, idem := h.start("tools/call", `{"name":"slowwrite","arguments":{"ms":400,"key":"w1"}}`)
	_, list := h.start("resources/list", `{"cursor":"page2"}`)
	cid, cancelled := h.start("tools/call", `{"name":"slow","arguments":{"ms":400,"key":"cancelme"}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + cid + `,"reason":"user"}}`)
	testenv.WaitFor(t, 5*time.Second, "the calls to reach the server", func() bool {
		return h.countEvents("call slowwrite") == 1 && h.countEvents("call slow cancelme") == 1
	})
	killed := time.Now()
	h.killChild()

	w := h.wait(idem, "non-idempotent call")
	if d := time.Since(killed); d > time.Second {
		t.Errorf("error for the non-idempotent call took %v, want < 1s", d)
	}
	if w.Get("error.code").Int() != -32603 {
		t.Fatalf("non-idempotent call: got %s, want a -32603 error", w.Raw)
	}
	msg := w.Get("error.message").String()
	for _, want := range []string{"killed by signal 9 (SIGKILL)", "is restarting", "not re-sent", "may or may not have taken effect", "starts fresh"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	data := w.Get("error.data")
	if data.Get("reason").String() != "not-retried" || data.Get("retried").Bool() || data.Get("exit.signal").String() != "killed" {
		t.Errorf("data: got %s", data.Raw)
	}

	if r := h.wait(read, "read-only call"); r.Get("result.content.0.text").String() != "waited 400 ms" {
		t.Errorf("read-only call: got %s, want it retried and answered", r.Raw)
	}
	if r := h.wait(list, "cursor continuation"); r.Get("error.data.reason").String() != "cursor-lost" {
		t.Errorf("cursor continuation: got %s, want a cursor-lost error", r.Raw)
	}
	select {
	case b := <-cancelled:
		t.Errorf("cancelled request answered: %s", b)
	case <-time.After(600 * time.Millisecond):
	}
	if n := h.countEvents("call slow cancelme"); n != 1 {
		t.Errorf("cancelled call executed %d times, want 1 (never retried)", n)
	}
	if n := h.countEvents("call slowwrite"); n != 1 {
		t.Errorf("non-idempotent call executed %d times, want 1", n)
	}
	if h.waitUp(pid) == pid {
		t.Error("no new server")
	}
	if len(h.dups) > 0 {
		t.Errorf("duplicate responses: %v", h.dups)
	}
}

func TestNoRetryFlag(t *testing.T) {
	h := newHarness(t, hopt{opts: func(o *Options) { o.NoRetry = true }})
	h.handshake()
	_, read := h.start("tools/call", `{"name":"slow","arguments":{"ms":400}}`)
	_, list := h.start("tools/list", "")
	h.waitCalls("slow", 1)
	h.killChild()
	if r := h.wait(read, "read-only call"); r.Get("error.data.reason").String() != "not-retried" {
		t.Errorf("with --no-retry a read-only tool call: got %s, want not-retried", r.Raw)
	}
	if r := h.wait(list, "tools/list"); !r.Get("result.tools").Exists() {
		t.Errorf("tools/list is still re-sent with --no-retry: got %s", r.Raw)
	}
}

func TestCrashOnCall(t *testing.T) {
	h := newHarness(t, hopt{})
	h.handshake()
	r := h.tool("crash", `{"code":7}`)
	if r.Get("error.code").Int() != -32603 || r.Get("error.data.exit.code").Int() != 7 {
		t.Fatalf("crash: got %s, want -32603 with exit code 7", r.Raw)
	}
	if tail := r.Get("error.data.stderr_tail").String(); !strings.Contains(tail, "crash tool called") {
		t.Errorf("stderr tail: got %s", tail)
	}
	// A read-only call that kills its server every time is re-sent twice,
	// then answered with an error instead of crash-looping forever.
	r = h.tool("crashread", "")
	if r.Get("error.data.reason").String() != "retries-exhausted" {
		t.Errorf("crashread: got %s, want retries-exhausted", r.Raw)
	}
	if n := h.countEvents("call crashread"); n != 3 {
		t.Errorf("crashread executed %d times, want 3", n)
	}
	if r := h.tool("echo", `{"text":"ok"}`); r.Get("result.content.0.text").String() != "ok" {
		t.Errorf("after crashes: got %s", r.Raw)
	}
}

// Server->client requests: ids stay unique across respawns, and those
// pending at the client when the server died are cancelled.
func TestServerRequestsAcrossRespawn(t *testing.T) {
	h := newHarness(t, hopt{})
	h.handshake()
	_, ask := h.start("tools/call", `{"name":"ask"}`)
	first := h.nextOther(t, "roots/list")
	h.killChild()
	c := h.nextOther(t, "notifications/cancelled")
	if got, want := c.Get("params.requestId").Raw, first.Get("id").Raw; got != want {
		t.Errorf("cancelled requestId %s, want %s", got, want)
	}
	if r := h.wait(ask, "ask"); r.Get("error.code").Int() != -32603 {
		t.Errorf("ask (non-idempotent) after death: got %s", r.Raw)
	}
	// The answer to the dead server's request is dropped quietly.
	h.send(`{"jsonrpc":"2.0","id":` + first.Get("id").Raw + `,"result":{"roots":[]}}`)

	_, ask2 := h.start("tools/call", `{"name":"ask"}`)
	second := h.nextOther(t, "roots/list")
	if second.Get("id").Raw == first.Get("id").Raw {
		t.Errorf("server->client id %s reused after respawn", first.Get("id").Raw)
	}
	h.send(`{"jsonrpc":"2.0","id":` + second.Get("id").Raw + `,"result":{"roots":[{"uri":"file:///root"}]}}`)
	if r := h.wait(ask2, "ask"); r.Get("result.content.0.text").String() != "file:///root" {
		t.Errorf("ask after respawn: got %s", r.Raw)
	}
}

func (h *harness) nextOther(t *testing.T, method string) gjson.Result {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case b := <-h.other:
			r := gjson.ParseBytes(b)
			if r.Get("method").String() == method {
				return r
			}
		case <-deadline:
			t.Fatalf("no %s reached the client", method)
		}
	}
}

// Rule 2: both eras pass through; the era is recorded; the stateless era
// replays no handshake.
func TestEras(t *testing.T) {
	for _, tt := range []struct {
		era, want string
		inits     int
	}{
		{"handshake", EraHandshake, 2},
		{"stateless", EraStateless, 0},
		{"both", EraStateless, 0},
	} {
		t.Run(tt.era, func(t *testing.T) {
			h := newHarness(t, hopt{server: func(o *example.Options, _ string) { o.Era = tt.era }})
			h.handshake()
			if got := h.sessEra(); got != tt.want {
				t.Errorf("era: got %q, want %q", got, tt.want)
			}
			old := h.killChild()
			h.waitUp(old)
			if r := h.tool("echo", `{"text":"x"}`); r.Get("result.content.0.text").String() != "x" {
				t.Errorf("after respawn: %s", r.Raw)
			}
			if n := h.countEvents("initialize "); n != tt.inits {
				t.Errorf("initialize seen %d times, want %d", n, tt.inits)
			}
		})
	}
}

func TestDiscoverDeathFallsBack(t *testing.T) {
	// A server that dies on server/discover every time: after one re-send
	// the client gets -32601 and falls back to initialize.
	h := newHarness(t, hopt{server: func(o *example.Options, _ string) { o.CrashOnDiscover = true }})
	r := h.call("server/discover", `{}`)
	if r.Get("error.code").Int() != -32601 {
		t.Fatalf("discover on a server that dies on it: got %s, want -32601", r.Raw)
	}
	if r := h.call("initialize", initParams); !r.Get("result").Exists() {
		t.Errorf("initialize after the fallback: %s", r.Raw)
	}
	if n := h.countEvents("start"); n != 3 {
		t.Errorf("server started %d times, want 3", n)
	}
}

// A restarted server that negotiates another protocol version is still
// used (the client keeps speaking its version), and the mismatch is
// reported.
func TestReplayVersionMismatch(t *testing.T) {
	h := newHarness(t, hopt{server: func(o *example.Options, _ string) { o.Faults.Version, o.Faults.VersionAfter = "2025-06-18", 1 }})
	h.handshake()
	old := h.killChild()
	h.waitUp(old)
	if r := h.tool("echo", `{"text":"v"}`); r.Get("result.content.0.text").String() != "v" {
		t.Errorf("after respawn: %s", r.Raw)
	}
	h.s.mu.Lock()
	last, version := h.s.lastErr, h.s.sess.version
	h.s.mu.Unlock()
	if !strings.Contains(last, `negotiated protocol version «2025-06-18»`) || version != "2025-11-25" {
		t.Errorf("lastErr %q, session version %q", last, version)
	}
}

// A long-lived request (a subscriptions/listen stream, a long read) is
// re-sent after any number of restarts, as long as it ran a while each
// time; only quick repeated deaths under it count against it.
func TestLongLivedRequestSurvivesRestarts(t *testing.T) {
	h := newHarness(t, hopt{fakeClock: true, opts: func(o *Options) { o.StableAfter = 100 * time.Millisecond }})
	h.handshake()
	_, ch := h.start("tools/call", `{"name":"hang2"}`)
	for i := 0; i < 4; i++ {
		h.waitCalls("hang2", i+1)
		h.clk.Advance(150 * time.Millisecond) // it runs a while
		old := h.killChild()
		h.advanceUntil("a new server", func() bool { pid := h.childPID(); return pid != 0 && pid != old })
	}
	select {
	case b := <-ch:
		t.Fatalf("long-lived read answered after 4 restarts: %s", b)
	default:
	}
}
