package shim

import (
	"bytes"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
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

// Part passes each part of a long line on, when its first part allows it
// (upstream.Handler); the line is then not kept, and is routed at its end
// from what the Follower saw.
func (p *served) Part(part []byte, first, last bool) (keep bool) {
	s := p.s
	if first {
		p.on = s.mayStream(part, p.gen)
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
		if part != nil { // else it went over the ceiling: the reader answers for it
			s.routeStreamed(&p.follow, p.gen)
		}
	}
	return false
}

// mayStream decides from head, the first part of a long line from the
// server of generation gen, whether the line may go to the client as it
// comes.
func (s *Shim) mayStream(head []byte, gen uint64) bool {
	id, ok := jsonrpc.ResponseHead(head)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen || s.noteDue {
		return false
	}
	if id != nil {
		e := s.inflight[string(id)]
		return e != nil && e.gen == gen && !e.injected && !recorded(e.method)
	}
	// The id comes after the cut: it must not be one of the shim's own,
	// nor a call whose answer the session records.
	for _, e := range s.inflight {
		if e.gen == gen && (e.injected && e.method != "ping" || recorded(e.method)) {
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
func (s *Shim) routeStreamed(f *jsonrpc.Follower, gen uint64) {
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
			s.answerUnreadable(m.ID, gen, err, jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInternalError, "unreadable", nil), false)
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
	_, changed := s.takeAnswer(stand, m, gen)
	s.mu.Unlock()
	if changed {
		s.record()
	}
}
