package shim

import (
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// pump forwards one connection's messages to the client until the
// connection's Recv is closed, then closes done. Owned by the supervisor.
func (s *Shim) pump(c upstream.Conn, gen uint64, done chan<- struct{}) {
	defer close(done)
	v, ok := c.(validator)
	valid := ok && v.ValidatesJSON()
	for line := range c.Recv() {
		s.fromUpstream(line, gen, valid)
	}
}

// validator is implemented by upstreams that deliver only valid UTF-8 JSON
// (proc.Process), so the shim need not validate each message twice.
type validator interface{ ValidatesJSON() bool }

// fromUpstream routes one message from the server of generation gen. line
// is owned (Recv hands over a fresh slice).
func (s *Shim) fromUpstream(line []byte, gen uint64, valid bool) {
	m, err := peekLine(line, valid)
	if err != nil {
		// proc already drops these; a remote upstream may not.
		s.log.Warn("dropped a message from the server that is not JSON-RPC", "err", err)
		return
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		s.mu.Lock()
		s.lastRecv = time.Now()
		key := string(m.ID)
		e := s.inflight[key]
		if e == nil || e.gen != gen {
			s.mu.Unlock()
			// A response for a request this server never had in flight,
			// e.g. one cancelled and already re-sent elsewhere.
			s.log.Debug("dropped a response with an unknown id", "id", key)
			return
		}
		delete(s.inflight, key)
		if e.injected {
			s.mu.Unlock()
			e.waiter <- line // buffered 1; never reaches the client
			return
		}
		changed := s.sess.noteResponse(e, line, m)
		s.mu.Unlock()
		if changed {
			s.record()
		}
		// Also when the client cancelled it: the client ignores answers to
		// cancelled requests, and the server meant to send it.
		s.writeOut(line)
	case jsonrpc.KindRequest:
		// Server->client request (roots/list, sampling, elicitation): give
		// it an id unique for the client's whole session, since a new
		// server numbers its requests from 0 again.
		s.mu.Lock()
		s.lastRecv = time.Now()
		cid := itoaID(s.nextSrvID)
		s.nextSrvID++
		s.srvReqs[string(cid)] = &srvReq{gen: gen, orig: append([]byte(nil), m.ID...), method: m.Method}
		s.mu.Unlock()
		s.writeOut(replaceID(line, cid))
	default:
		s.mu.Lock()
		s.lastRecv = time.Now()
		s.mu.Unlock()
		s.writeOut(line)
	}
}
