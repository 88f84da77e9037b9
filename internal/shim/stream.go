package shim

import (
	"bytes"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// A long answer is passed on as it comes (issue 25): a relay that waits
// for a message's end sends nothing until the server is done, so a 16 MiB
// answer crossed the shim in two halves, one after the other (3.5× the
// server's own time against a byte relay's 1.4×). Once the first 64 KiB
// of a line show the start of a response that goes to the client as it
// is, each part is written to the client as it is read, with no copy of
// its own; jsonrpc.Follower follows it without keeping it, checks it by
// the rules a whole line is checked by (jsoncheck's grammar, Peek's
// members: issue 30), and the call it answers is settled at its end
// (routeStreamed), as a success or as an error.
//
// Only a line the shim would forward unchanged is passed on early: the
// head must be a well-formed response so far (jsonrpc.ResponseHead), of
// the server in use, and it must not be able to answer the shim's own
// request (a replayed tools/list), a call whose answer the session
// records, or a call that gets a restart note. Everything else waits for
// its end as before. A line that turns out broken once complete reached
// the client as the server wrote it (the client parses it as it would
// directly) and, when it names a call in flight, that call also gets the
// shim's error answer (answerUnreadable).
//
// A line cut by the server's end (its stdout ended in the middle: it was
// killed, or it exited) is ended for the client, which skips a line it
// cannot parse and keeps the connection (docs/claude-code-behaviour.md,
// measured with Claude Code 2.1.328 and 2.1.332). The call it answered
// is settled with the server's end (cutShort, then connDied) and gets one
// account of both (health.CutError), with no restart note after it.

// Part passes each part of a long line on, when its first part allows it
// (upstream.Handler); the line is then not kept, and is routed at its end
// from what the Follower saw.
func (p *served) Part(part []byte, first, last bool) (keep bool) {
	s := p.s
	if first {
		p.on = s.mayStream(part, p.r)
		if !p.on {
			return true
		}
		p.follow, p.n, p.head = jsonrpc.Follower{}, 0, nil
		if s.o.Traffic != nil {
			p.head = bytes.Clone(part[:min(len(part), 1024)])
		}
		s.out.begin()
	}
	if !p.on {
		return true
	}
	if len(part) > 0 {
		p.n += int64(len(part))
		p.follow.Write(part)
		if err := s.out.part(part); err != nil {
			s.log.Debug("write to client", "err", err)
		}
	}
	if last {
		// The line's own end, when it had one; a line cut at the
		// ceiling or by the server's end is ended here.
		p.on = false
		if err := s.out.end(len(part) == 0 || part[len(part)-1] != '\n'); err != nil {
			s.log.Debug("write to client", "err", err)
		}
		s.trafficLong("s2c", p.n, p.head)
		switch {
		case part == nil: // over the ceiling: the reader answers for it
		case (len(part) == 0 || part[len(part)-1] != '\n') && s.cutShort(&p.follow, p.r, p.n):
		default:
			s.routeStreamed(&p.follow, p.r)
		}
	}
	return false
}

// mayStream decides from head, the first part of a long line from the
// server of run r, whether the line may go to the client as it
// comes.
func (s *Shim) mayStream(head []byte, r *run) bool {
	id, ok := jsonrpc.ResponseHead(head)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r != s.run || s.note.due {
		return false
	}
	if id != nil {
		e := s.inflight[string(id)]
		return e != nil && e.run == r && !e.injected && !recorded(e.method)
	}
	// The id comes after the cut: it must not be one of the shim's own,
	// nor a call whose answer the session records.
	for _, e := range s.inflight {
		if e.run == r && (e.injected && e.method != "ping" || recorded(e.method)) {
			return false
		}
	}
	return true
}

// recorded reports whether the session keeps what a call of method
// answers (session.noteResponse reads the answer itself): such an answer
// is routed whole.
func recorded(method string) bool {
	return method == "initialize" || method == "tools/list" || method == "server/discover"
}

// routeStreamed routes a line whose bytes already went to the client as
// they came (Part), from what f saw of it, as fromUpstream routes a whole
// line: the call it answers is settled, as a success or as an error (an
// error answer records nothing of the session); when it turned out no
// JSON-RPC response (broken JSON, or a member a response cannot have),
// the call it names gets the shim's error answer too.
func (s *Shim) routeStreamed(f *jsonrpc.Follower, r *run) {
	m, err := f.End()
	if err == nil && m.Kind != jsonrpc.KindResponse {
		err = jsonrpc.ErrNotJSONRPC
	}
	if err != nil {
		if n, ok := s.lim.junk.allow(s.clk.Now()); ok {
			attrs := []any{"err", err}
			if n > 0 {
				attrs = append(attrs, "suppressed_since_last", n)
			}
			s.log.Warn("passed on a long line from the server as it came, and it ended as no valid JSON-RPC response", attrs...)
		}
		if m.ID != nil {
			s.answerUnreadable(m.ID, r, err, jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInternalError, "unreadable", nil), false)
		}
		return
	}
	if string(m.ID) == "null" {
		s.log.Debug("passed on a long response with a null id")
		return
	}
	// What the shim's own request (a ping) gets in its place: its waiter
	// only asks whether an answer came. The session records nothing of
	// the calls whose answers are passed on (mayStream), nor of an error.
	stand := jsonrpc.ResultReply(m.ID, []byte("{}"))
	if m.IsError {
		stand = jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInternalError, "passed on", nil)
	}
	s.mu.Lock()
	_, changed := s.takeAnswer(stand, m, r)
	s.mu.Unlock()
	if changed {
		s.record()
	}
}

// cutShort marks the call whose answer, passed on as it came, the end of
// the server of run r cut after n bytes, when f shows the line
// unfinished: the call is answered once the server's end is known
// (settle: cutReply), with one account of both. The call is the one the
// line names, or, when its id had not come yet, the only client call in
// flight on that server. false: the line was whole, or names no call in
// flight (routeStreamed routes it).
func (s *Shim) cutShort(f *jsonrpc.Follower, r *run, n int64) bool {
	m, err := f.End()
	if err == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var e *entry
	if m.ID != nil {
		e = s.inflight[string(m.ID)]
	} else {
		for _, c := range s.inflight {
			if c.run == r && !c.injected {
				if e != nil {
					return false // which one it answered is not known
				}
				e = c
			}
		}
	}
	if e == nil || e.run != r || e.injected {
		return false
	}
	e.cut = n
	return true
}

// cutReply is the one account of call e, whose answer the server's end
// (ex) cut after e.cut bytes: not re-sent, and the news of the restart
// (no note follows). Called with mu held, from settle.
func (s *Shim) cutReply(e *entry, ex upstream.Exit, purpose string) []byte {
	c := s.causeOf(ex.Exit)
	if purpose != "" {
		c = health.Cause{Kind: state.CauseRestart, Detail: purpose}
	}
	s.note.due = false
	data := errData{Reason: "answer-cut", Server: s.o.Name, Method: e.method, Tool: e.tool, Exit: &ex.Exit, StderrTail: ex.StderrTail, Attempts: e.retries + 1, Bytes: e.cut}
	return jsonrpc.ErrorReply(e.id, jsonrpc.CodeInternalError, health.CutError(s.o.Name, c, e.cut, !s.isFailed()), data)
}
