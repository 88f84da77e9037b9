package shim

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/text"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// server is implemented by a connection that can hand each message to
// the shim in the goroutine that read it (proc.Process): a message is then
// routed and written to the client with no hand-off between goroutines,
// as a byte relay would move it. Serve returns false when the connection
// delivers over Recv instead.
type server interface {
	Serve(h upstream.Handler) bool
}

// pump forwards one connection's messages to the client until the
// connection is dead and every message it read was routed, then closes
// done. Owned by the supervisor.
func (s *Shim) pump(r *run, done chan<- struct{}) {
	defer close(done)
	c := r.conn
	if sv, ok := c.(server); ok && sv.Serve(&served{s: s, r: r}) {
		return
	}
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
		s.fromUpstream(line, r, more)
	}
}

// served is the pump of one connection that hands its messages over in
// the goroutine that read them (server), with the state of a long answer
// passed on as it comes (stream.go).
type served struct {
	s      *Shim
	r      *run
	on     bool // a long line is being passed on
	follow jsonrpc.Follower
	head   []byte // its first bytes, for the traffic log
	n      int64  // its bytes so far
}

func (p *served) Line(line []byte, more bool) { p.s.fromUpstream(line, p.r, more) }

// fromUpstream routes one message from the server of run r. line is owned
// (Recv hands over a fresh slice).
func (s *Shim) fromUpstream(line []byte, r *run, more bool) {
	// Invalid UTF-8 passes through: the client decodes it as it would
	// directly (jsonrpc.PeekAnyText).
	m, err := jsonrpc.PeekAnyText(line)
	if err != nil {
		// The stdio transport allows nothing but MCP messages on stdout;
		// a stray print must never reach the client (a Go SDK client
		// closes the session on a non-JSON line).
		if n, ok := s.lim.junk.allow(s.clk.Now()); ok {
			attrs := []any{"err", err, "line", text.Clip(redact.String(text.ClipBytes(line, 4096)), 200)}
			if n > 0 {
				attrs = append(attrs, "suppressed_since_last", n)
			}
			s.log.Warn("dropped a line from the server that is not JSON-RPC", attrs...)
		}
		// But a call must never wait on a line dropped here.
		s.unroutable(line, r, err, more)
		if !more {
			s.out.flush()
		}
		return
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		s.mu.Lock()
		e, changed := s.takeAnswer(line, m, r)
		changed = s.requiet() || changed
		if e == nil {
			s.mu.Unlock()
			if changed {
				s.record()
			}
			if !more {
				s.out.flush()
			}
			return
		}
		if e.task != "" && m.IsError {
			line = s.taskGoneReply(e, line)
		}
		line, noted := s.withNote(e, s.worded(line, m.ID))
		s.mu.Unlock()
		if changed || noted {
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
		s.heard(r)
		if s.requiet() {
			defer s.record()
		}
		if len(s.srvReqs) >= maxSrvReqs {
			s.mu.Unlock()
			s.refuseSrvReq(r, m)
			if !more {
				s.out.flush()
			}
			return
		}
		cid := itoaID(s.nextSrvID)
		s.nextSrvID++
		s.srvReqs[string(cid)] = &srvReq{run: r, orig: append([]byte(nil), m.ID...), method: m.Method}
		s.mu.Unlock()
		s.writeOutMore(jsonrpc.ReplaceID(line, cid), more)
	default:
		s.mu.Lock()
		s.heard(r) // a progress notification is a sign of life
		changed := s.requiet()
		s.mu.Unlock()
		if changed {
			s.record()
		}
		s.writeOutMore(line, more)
	}
}

// takeAnswer settles the call a response from the server of run r
// answers, and returns its entry when the response goes on to the
// client: nil when it answers none of this server's calls in flight (e.g.
// one cancelled and already re-sent elsewhere: dropped), or the shim's own
// request (handed to its waiter). changed: the session's record changed.
// Called with mu held.
func (s *Shim) takeAnswer(line []byte, m jsonrpc.Msg, r *run) (e *entry, changed bool) {
	key := string(m.ID)
	e = s.inflight[key]
	if e != nil && e.run == r && !e.injected {
		r.live.AnsweredRequest(s.clk.Now(), e.sentAt)
	} else {
		s.heard(r)
	}
	if e == nil || e.run != r {
		s.log.Debug("dropped a response with an unknown id", "id", key)
		return nil, false
	}
	delete(s.inflight, key)
	if e.injected {
		e.waiter <- line // buffered 1; never reaches the client
		return nil, false
	}
	changed = s.sess.noteResponse(e, line, m)
	s.noteTask(r, line)
	r.answered++ // supervise.go, provedHealthy
	s.markIgnored(e, r)
	return e, changed
}

// unroutable answers the call whose id a dropped line names, when one is
// in flight on this server: the line was meant as its answer (a truncated
// or malformed one), and no other will come. A line naming no call in
// flight (junk, a log line) only was dropped.
func (s *Shim) unroutable(line []byte, r *run, why error, more bool) {
	id := gjson.GetBytes(line, "id")
	if id.Type != gjson.Number && id.Type != gjson.String {
		return
	}
	s.answerUnreadable([]byte(id.Raw), r, why, line, more)
}

// answerUnreadable answers the call in flight on the server of run r
// whose raw id is id, when there is one, for a line from the server
// that named it and could not be read (line: what goes to the waiter of
// the shim's own request).
func (s *Shim) answerUnreadable(id []byte, r *run, why error, line []byte, more bool) {
	s.mu.Lock()
	e := s.inflight[string(id)]
	if e == nil || e.run != r {
		s.mu.Unlock()
		return
	}
	delete(s.inflight, string(id))
	if e.injected {
		s.mu.Unlock()
		e.waiter <- line // the shim's own request: whoever sent it judges it
		return
	}
	s.mu.Unlock()
	msg := fmt.Sprintf("mcp-heal: the MCP server %q answered this call with a line that is not a valid JSON-RPC message (%v), so it could not be passed on; the server is still running. Retry the call, or check the server's own logs", s.o.Name, why)
	data := errData{Reason: "unreadable-answer", Server: s.o.Name, Method: e.method, Tool: e.tool}
	s.writeOutMore(jsonrpc.ErrorReply(e.id, jsonrpc.CodeInternalError, msg, data), more)
}

// maxSrvReqs bounds the server->client requests the client has not
// answered yet. Claude Code answers each at once (or when the user closes
// a dialog), so a few are normal; thousands mean a server that floods
// requests, and each would hold memory until the session ends.
const maxSrvReqs = 1024

// refuseSrvReq answers a server->client request the table has no room for
// with an error, so the server does not wait forever, and logs it (rate
// limited like the junk warnings).
func (s *Shim) refuseSrvReq(r *run, m jsonrpc.Msg) {
	if n, ok := s.lim.junk.allow(s.clk.Now()); ok {
		s.log.Warn("refused a server-to-client request: too many unanswered", "method", m.Method, "limit", maxSrvReqs, "suppressed_since_last", n)
	}
	// At most a few answers in flight at once: a server that floods
	// requests and does not read its stdin must not pile up goroutines.
	c := r.conn
	if s.lim.refusing.Add(1) > 16 {
		s.lim.refusing.Add(-1)
		return
	}
	reply := jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInternalError,
		fmt.Sprintf("mcp-heal: the client has %d requests from this server unanswered; this one was not forwarded", maxSrvReqs), nil)
	go func() {
		// Apart from the pump: Send may block on a server that is not
		// reading, and the pump must keep draining its output. It ends
		// when Send returns, at the latest when the connection is closed
		// (every connection is closed before Run returns).
		defer s.lim.refusing.Add(-1)
		s.sendMu.Lock()
		defer s.sendMu.Unlock()
		s.mu.Lock()
		cur := s.run == r && !r.down
		s.mu.Unlock()
		if cur {
			_ = s.sendUp(c, reply, false)
		}
	}()
}

// pumpLimits bound what a server can make the shim hold or log.
type pumpLimits struct {
	junk     warnLimiter
	refusing atomic.Int32 // refusals being sent
}

// warnLimiter rate-limits warnings a server can trigger at will (junk on
// stdout, refused requests): at most warnBurst per warnWindow, then the
// count of suppressed ones rides on the next warning let through.
type warnLimiter struct {
	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

const (
	warnBurst  = 10
	warnWindow = time.Minute
)

// allow reports whether a warning may be logged now, and how many were
// suppressed since the last one that was.
func (l *warnLimiter) allow(now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= warnWindow {
		l.start, l.n = now, 0
	}
	if l.n >= warnBurst {
		l.suppressed++
		return 0, false
	}
	l.n++
	n := l.suppressed
	l.suppressed = 0
	return n, true
}
