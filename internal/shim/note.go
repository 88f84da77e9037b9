package shim

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// After a restart the server starts empty: a browser's pages, a thinking
// server's history, whatever it held in memory is gone, and a read-only
// call re-sent to it answers coherently from the empty state. The model
// must learn that once, and not from a guess: the first tools/call result
// after the restart gets one more text item saying so
// (health.RestartNote). Claude Code shows the model a result's text items,
// but of a result with structuredContent it shows only that
// (docs/claude-code-behaviour.md, measured by
// e2e.TestRestartNoteReachesModelOnce), and structuredContent must keep
// matching the tool's outputSchema: such a result is left as it is and the
// note is published for the plugin's PreToolUse hook, which gives it as
// context before the next call (e2e.TestRestartNoteStructuredOnce), or
// rides on the next plain result if no hook gave it first. An error reply that already says the
// server restarted (health.DiedError) tells the model instead, and no note
// follows it.

// restartNote is the restart the model has not been told of yet: the
// next tools/call result carries it, or an error that tells it.
type restartNote struct {
	cause health.Cause
	due   bool
	// key names this restart's note for state.ClaimTold; pending is the
	// note published in the record for the hook.
	key, pending string
}

// noteRestart records that the model is owed the news of a restart for
// cause c. Called with mu held.
func (s *Shim) noteRestart(c health.Cause) {
	s.forgetNoteClaim() // the previous restart's note is no longer owed
	s.note.cause, s.note.due, s.note.pending = c, true, ""
	s.note.key = fmt.Sprintf("restart-note-%d-%d-%d", s.pid, s.start.UnixNano(), s.restarts)
}

// forgetNoteClaim removes the claim of the last restart note, if any
// (state.ForgetClaim): a shim leaves one claim at most behind, not one per
// restart.
func (s *Shim) forgetNoteClaim() {
	if s.note.key == "" || !s.o.Record {
		return
	}
	if err := state.ForgetClaim(s.note.key); err != nil {
		s.log.Warn("forgetting a restart note's claim", "err", err)
	}
}

// withNote returns line, the result of tools/call e, with the restart
// note added when one is due, and clears it; changed reports that the
// note's part of the state record changed (the caller records it after
// releasing mu). A result with structuredContent cannot carry the note:
// it is published in the record instead (Record.Note) for the PreToolUse
// hook to give as context before the next call; whoever claims the note's
// key first (state.ClaimTold) tells the model, so it is told once. Called
// with mu held.
func (s *Shim) withNote(e *entry, line []byte) (out []byte, changed bool) {
	if !s.note.due || e.method != "tools/call" {
		return line, false
	}
	if s.note.pending != "" && state.Claimed(s.note.key) {
		s.note.due, s.note.pending = false, "" // the hook told the model
		return line, true
	}
	o := health.Outcome{Kind: health.OutcomeFresh}
	switch {
	case e.retries > 0:
		o.Kind = health.OutcomeResent
	case e.at.Before(s.run.upSince):
		o.Kind = health.OutcomeQueued
	}
	out, ok := addText(line, health.RestartNote(s.o.Name, s.note.cause, o))
	if !ok {
		// An error reply, or no content array: a later result. Of a
		// structured one, or of the server's own error (a database
		// server whose database is down answers errors for a while:
		// the note came on the first result after it was back, two
		// calls late, issue 32), the hooks tell the model: the
		// PostToolUseFailure hook of this very call, or the PreToolUse
		// hook of the next.
		if s.o.Record && s.note.pending == "" && (gjson.GetBytes(line, "result.structuredContent").Exists() || gjson.GetBytes(line, "error").Exists()) {
			s.note.pending = health.RestartNote(s.o.Name, s.note.cause, health.Outcome{Kind: health.OutcomeFresh})
			return line, true
		}
		return line, false
	}
	changed = true // the record drops note_key (and note)
	s.note.due, s.note.pending = false, ""
	if s.o.Record {
		if won, err := state.ClaimTold(s.note.key); err == nil && !won {
			return line, changed // a hook told it meanwhile
		}
	}
	return out, changed
}

// addText appends a text content item to the result.content array of
// the JSON-RPC response line; false when it has none, or has
// structuredContent (the model would not see the item).
func addText(line []byte, text string) ([]byte, bool) {
	r := gjson.GetManyBytes(line, "result.content", "result.structuredContent")
	c := r[0]
	if r[1].Exists() {
		return nil, false
	}
	if !c.IsArray() || c.Index <= 0 || c.Index+len(c.Raw) > len(line) {
		return nil, false
	}
	end := c.Index + len(c.Raw) - 1 // the closing ]
	if line[end] != ']' {
		return nil, false
	}
	t, _ := json.Marshal(text)
	item := append(append([]byte(`{"type":"text","text":`), t...), '}')
	if len(bytes.TrimSpace(line[c.Index+1:end])) > 0 {
		item = append([]byte{','}, item...)
	}
	out := make([]byte, 0, len(line)+len(item))
	out = append(out, line[:end]...)
	out = append(out, item...)
	return append(out, line[end:]...), true
}

// worded returns line, a response to a call, in the one sentence shape
// when it is the error a relay made for an answer it dropped for its size
// (jsonrpc.TooLongReply: data.reason message-too-large, the sizes in
// data): the relay knows the sizes, the shim the server's name and mode,
// internal/health the words. Other responses are returned as they are;
// the check costs nothing for an answer larger than such an error.
func (s *Shim) worded(line []byte, id []byte) []byte {
	if len(line) > 4096 || !bytes.Contains(line, []byte(`"message-too-large"`)) {
		return line
	}
	r := gjson.GetManyBytes(line, "error.data.reason", "error.data.bytes", "error.data.limit", "error.code", "error.data")
	if r[0].String() != "message-too-large" {
		return line
	}
	c := health.Cause{Kind: state.CauseOversize, Remote: s.mode == state.ModeRemote, Detail: health.OversizeDetail(r[1].Int(), r[2].Int())}
	msg := health.DroppedError(s.o.Name, c, health.OversizeAdvice(r[2].Int()))
	return jsonrpc.ErrorReply(id, int(r[3].Int()), msg, json.RawMessage(r[4].Raw))
}
