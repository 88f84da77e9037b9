//go:build unix

package shim

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestRestartNoteOnce: after the server is killed, the first tools/call
// result carries one more text item telling the model the server was
// restarted and its in-memory state is gone (issue 17 item 5); the
// server's own items come first and unchanged, and later results carry
// nothing. A read-only call running at the kill is re-sent and says so.
func TestRestartNoteOnce(t *testing.T) {
	h := newHarness(t, hopt{})
	h.handshake()
	if r := h.tool("echo", `{"text":"before"}`); r.Get("result.content.#").Int() != 1 {
		t.Fatalf("before any restart: got %s, want the server's one item", r.Raw)
	}

	// A read-only call running when the server is killed: re-sent.
	_, slow := h.start("tools/call", `{"name":"slow","arguments":{"ms":400}}`)
	h.waitCalls("slow", 1)
	pid := h.killChild()
	r := h.wait(slow, "re-sent call")
	items := r.Get("result.content").Array()
	if len(items) != 2 || items[0].Get("text").String() != "waited 400 ms" {
		t.Fatalf("first result after the restart: got %s, want the server's item and the note", r.Raw)
	}
	note := items[1].Get("text").String()
	for _, want := range []string{
		`mcp-heal: MCP server "fake" was restarted: the server process was killed by signal 9 (SIGKILL); this call was re-sent; `,
		"what the old process held only in memory is gone; what it saved may still be there.",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
	if items[1].Get("type").String() != "text" {
		t.Errorf("note item: %s", items[1].Raw)
	}
	if _, ok := health.Classify(note); ok {
		t.Errorf("the note is classified as a failure: %q", note)
	}
	h.waitUp(pid)
	for i := 0; i < 2; i++ {
		if r := h.tool("echo", `{"text":"after"}`); r.Get("result.content.#").Int() != 1 {
			t.Errorf("result %d after the note: got %s, want the server's one item", i+1, r.Raw)
		}
	}

	// Killed between calls: the next call is fresh, and told once.
	pid = h.killChild()
	h.waitUp(pid)
	r = h.tool("echo", `{"text":"fresh"}`)
	if got := r.Get("result.content.1.text").String(); !strings.HasSuffix(got, `(SIGKILL); what the old process held only in memory is gone; what it saved may still be there.`) {
		t.Errorf("first call after a kill between calls: got %s", r.Raw)
	}
	if r := h.tool("echo", `{"text":"again"}`); r.Get("result.content.#").Int() != 1 {
		t.Errorf("second call: got %s", r.Raw)
	}
}

// TestNoNoteAfterRestartError: when the call running at the kill is not
// re-sent, its error already tells the model of the restart and the lost
// state; the next result carries no note. The call continued an
// input-required result: the advice ends the one sentence.
func TestNoNoteAfterRestartError(t *testing.T) {
	h := newHarness(t, hopt{})
	h.handshake()
	_, w := h.start("tools/call", `{"name":"slowwrite","arguments":{"ms":400,"key":"k"},"requestState":"round2"}`)
	h.waitCalls("slowwrite", 1)
	pid := h.killChild()
	r := h.wait(w, "non-idempotent call")
	if msg := r.Get("error.message").String(); !strings.HasSuffix(msg, "may still be there; it continued an input-required tools/call, so start the call again from the first round.") {
		t.Fatalf("got %s, want an error saying the state is gone, then what to do", r.Raw)
	}
	h.waitUp(pid)
	if r := h.tool("echo", `{"text":"x"}`); r.Get("result.content.#").Int() != 1 {
		t.Errorf("after the error: got %s, want no note", r.Raw)
	}
}

func TestAddText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}],"isError":false}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"},{"type":"text","text":"n\"b"}],"isError":false}}`},
		// Claude Code would show the model only structuredContent.
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}],"structuredContent":{"x":1}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[ ]}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[ {"type":"text","text":"n\"b"}]}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":"x"}}`, ""},
	} {
		got, ok := addText([]byte(tt.in), `n"b`)
		if string(got) != tt.want || ok != (tt.want != "") {
			t.Errorf("addText(%s) = %s, %v; want %s", tt.in, got, ok, tt.want)
		}
	}
}

// TestToldBounded: the claims that settle who tells a restart note do not
// pile up (issue 24 item 5: told/ grew by one file per restart, forever):
// a shim keeps the claim of its last note only, and none once it exits.
func TestToldBounded(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	h := newHarness(t, hopt{opts: func(o *Options) { o.Record = true }})
	h.handshake()
	told := func() int {
		ents, err := os.ReadDir(state.ToldDir())
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return len(ents)
	}
	const restarts = 5
	for i := range restarts {
		pid := h.killChild()
		h.waitUp(pid)
		if r := h.tool("echo", `{"text":"x"}`); !strings.Contains(r.Get("result.content.1.text").String(), "was restarted") {
			t.Fatalf("restart %d: no note on the first result: %s", i+1, r.Raw)
		}
	}
	if n := told(); n > 1 {
		t.Errorf("after %d restarts told/ holds %d files, want at most 1 (the last note's claim)", restarts, n)
	}
	h.in.Close()
	select {
	case err := <-h.runDone:
		h.runDone <- err // for the harness's own close
	case <-time.After(15 * time.Second):
		t.Fatal("shim did not stop within 15s after client EOF")
	}
	if n := told(); n != 0 {
		t.Errorf("after the shim exited told/ holds %d files, want none", n)
	}
}

// TestRestartNoteStructured: a result with structuredContent cannot carry
// the restart note (Claude Code shows the model only structuredContent),
// so the shim publishes it in its state record, where the PreToolUse hook
// finds it (and the attention marker makes the launcher run the hook).
// Whoever claims the note's key first tells the model: after a hook
// claimed it the next plain result carries nothing; with no hook, the
// next plain result carries it, claimed, so no hook repeats it.
func TestRestartNoteStructured(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	h := newHarness(t, hopt{opts: func(o *Options) { o.Record = true }})
	h.handshake()
	marker := func() bool {
		_, err := os.Lstat(state.AttentionDir() + "/" + state.ShimAttention(os.Getpid()))
		return err == nil
	}
	structured := func(when string) {
		t.Helper()
		r := h.tool("structured", `{}`)
		if r.Get("result.content.#").Int() != 1 || !r.Get("result.structuredContent").Exists() {
			t.Fatalf("%s: got %s, want the server's result untouched", when, r.Raw)
		}
	}

	for _, hook := range []bool{true, false} {
		pid := h.killChild()
		h.waitUp(pid)
		structured("first call after the restart")
		r := waitOwnRecord(t, "the note published in the record", func(r *state.Record) bool { return r.Note != "" })
		if !strings.Contains(r.Note, `MCP server "fake" was restarted`) || !strings.Contains(r.Note, "is gone") || r.NoteKey == "" {
			t.Errorf("published note %q (key %q)", r.Note, r.NoteKey)
		}
		// state.Write sets the marker after it renames the record in.
		testenv.WaitFor(t, 5*time.Second, "the attention marker (else the launcher would not run the hook)", marker)
		structured("second structured call")
		if hook {
			if won, err := state.ClaimTold(r.NoteKey); err != nil || !won {
				t.Fatalf("the hook's claim: %v %v", won, err)
			}
			if r := h.tool("echo", `{"text":"x"}`); r.Get("result.content.#").Int() != 1 {
				t.Errorf("plain call after the hook told the model: got %s, want no note", r.Raw)
			}
		} else {
			if r := h.tool("echo", `{"text":"x"}`); !strings.Contains(r.Get("result.content.1.text").String(), "was restarted") {
				t.Errorf("plain call with no hook: got %s, want the note", r.Raw)
			}
			if won, _ := state.ClaimTold(r.NoteKey); won {
				t.Error("a hook could claim the note the shim gave")
			}
		}
		waitOwnRecord(t, "the note cleared from the record", func(r *state.Record) bool { return r.Note == "" })
		testenv.WaitFor(t, 5*time.Second, "the attention marker gone after the note was given", func() bool { return !marker() })
		if r := h.tool("echo", `{"text":"y"}`); r.Get("result.content.#").Int() != 1 {
			t.Errorf("later call: got %s, want no note", r.Raw)
		}
	}
}

// TestRestartNoteKeyForMonitor: from the restart on, the record carries
// the note's key (note_key) while the model is owed the news, with no
// note and no attention marker (a plain result can still carry it); when
// another reader claims it first (the plugin's monitor, which told the
// model in a line of its own), the next result carries no note, and the
// record drops the key once the news is given.
func TestRestartNoteKeyForMonitor(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	h := newHarness(t, hopt{opts: func(o *Options) { o.Record = true }})
	h.handshake()
	for _, monitor := range []bool{true, false} {
		pid := h.killChild()
		h.waitUp(pid)
		r := waitOwnRecord(t, "the note's key in the record", func(r *state.Record) bool { return r.NoteKey != "" && r.State == state.Running })
		if r.Note != "" {
			t.Errorf("a note published before any structured result: %q", r.Note)
		}
		if _, err := os.Lstat(state.AttentionDir() + "/" + state.ShimAttention(os.Getpid())); err == nil {
			t.Error("attention marker set for a note a plain result can carry")
		}
		if monitor {
			if won, err := state.ClaimTold(r.NoteKey); err != nil || !won {
				t.Fatalf("the monitor's claim: %v %v", won, err)
			}
		}
		res := h.tool("echo", `{"text":"x"}`)
		if n := res.Get("result.content.#").Int(); monitor && n != 1 || !monitor && n != 2 {
			t.Errorf("monitor told it first: %v; first result after the restart: %s", monitor, res.Raw)
		}
		waitOwnRecord(t, "the key dropped once the news was given", func(r *state.Record) bool { return r.NoteKey == "" })
	}
}

// TestRestartNoteOnServerError (issue 32, item 5): the first answer of the
// new process is the server's own error (a database server while its
// database is down answers errors for a while). An error cannot carry the
// note, so the shim publishes it at once, for the PostToolUseFailure hook
// of that call (or the PreToolUse hook of the next); before, it waited
// for the first result, which came calls later, after the outage.
func TestRestartNoteOnServerError(t *testing.T) {
	testenv.UseStateDir(t, t.TempDir())
	h := newHarness(t, hopt{opts: func(o *Options) { o.Record = true }})
	h.handshake()
	pid := h.killChild()
	h.waitUp(pid)
	if r := h.tool("no_such_tool", `{}`); !r.Get("error").Exists() {
		t.Fatalf("got %s, want the server's error", r.Raw)
	}
	rec := waitOwnRecord(t, "the note published in the record after the server's error", func(r *state.Record) bool { return r.Note != "" })
	if !strings.Contains(rec.Note, `MCP server "fake" was restarted`) || rec.NoteKey == "" {
		t.Errorf("published note %q (key %q)", rec.Note, rec.NoteKey)
	}
	// Given by a hook: the next result carries nothing.
	if won, err := state.ClaimTold(rec.NoteKey); err != nil || !won {
		t.Fatalf("the hook's claim: %v %v", won, err)
	}
	if r := h.tool("echo", `{"text":"x"}`); r.Get("result.content.#").Int() != 1 {
		t.Errorf("the call after the hook told the model: got %s, want no note", r.Raw)
	}
}

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
