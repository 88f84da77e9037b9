//go:build unix

package shim

import (
	"os"
	"strings"
	"testing"
	"time"

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
