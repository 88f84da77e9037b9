//go:build unix

package shim

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

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
