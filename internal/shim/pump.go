package shim

import (
	"runtime"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// pump forwards one connection's messages to the client until the
// connection's Recv is closed, then closes done. Owned by the supervisor.
func (s *Shim) pump(c upstream.Conn, gen uint64, done chan<- struct{}) {
	defer close(done)
	recv := c.Recv()
	for line := range recv {
		// Flush to the client only when no further message is waiting.
		// The reader may be about to hand over the next line it already
		// has buffered: let it run once before deciding (with the shim's
		// single P this is exact enough to batch bursts into one write).
		more := len(recv) > 0
		if !more {
			runtime.Gosched()
			more = len(recv) > 0
		}
		s.fromUpstream(line, gen, more)
	}
}

// fromUpstream routes one message from the server of generation gen. line
// is owned (Recv hands over a fresh slice).
func (s *Shim) fromUpstream(line []byte, gen uint64, more bool) {
	m, err := jsonrpc.Peek(line)
	if err != nil {
		// The stdio transport allows nothing but MCP messages on stdout;
		// a stray print must never reach the client (a Go SDK client
		// closes the session on a non-JSON line).
		s.log.Warn("dropped a line from the server that is not JSON-RPC", "err", err, "line", redact.String(snippet(line)))
		if !more {
			s.out.flush()
		}
		return
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		s.mu.Lock()
		s.lastRecv = s.clk.Now()
		key := string(m.ID)
		e := s.inflight[key]
		if e == nil || e.gen != gen {
			s.mu.Unlock()
			// A response for a request this server never had in flight,
			// e.g. one cancelled and already re-sent elsewhere.
			s.log.Debug("dropped a response with an unknown id", "id", key)
			if !more {
				s.out.flush()
			}
			return
		}
		delete(s.inflight, key)
		if e.injected {
			s.mu.Unlock()
			e.waiter <- line // buffered 1; never reaches the client
			if !more {
				s.out.flush()
			}
			return
		}
		changed := s.sess.noteResponse(e, line, m)
		s.mu.Unlock()
		if changed {
			s.record()
		}
		// Also when the client cancelled it: the client ignores answers to
		// cancelled requests, and the server meant to send it.
		s.writeOutMore(line, more)
	case jsonrpc.KindRequest:
		// Server->client request (roots/list, sampling, elicitation): give
		// it an id unique for the client's whole session, since a new
		// server numbers its requests from 0 again.
		s.mu.Lock()
		s.lastRecv = s.clk.Now()
		cid := itoaID(s.nextSrvID)
		s.nextSrvID++
		s.srvReqs[string(cid)] = &srvReq{gen: gen, orig: append([]byte(nil), m.ID...), method: m.Method}
		s.mu.Unlock()
		s.writeOutMore(replaceID(line, cid), more)
	default:
		s.mu.Lock()
		s.lastRecv = s.clk.Now()
		s.mu.Unlock()
		s.writeOutMore(line, more)
	}
}

func snippet(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
