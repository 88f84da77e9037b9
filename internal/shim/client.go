package shim

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// readClient is the client reader: one message per line from stdin. It
// returns nil at EOF.
func (s *Shim) readClient() error {
	r := s.in
	for {
		if r.Buffered() == 0 {
			// About to block on the client: write what was batched.
			s.flushUp()
		}
		line, err := r.Next()
		if tl, ok := err.(*jsonrpc.TooLongError); ok {
			s.tooLongFromClient(tl)
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if len(line) == 0 {
			continue
		}
		s.traffic("c2s", line)
		m, err := jsonrpc.Peek(line)
		if err != nil {
			s.badClientLine(line, err)
			continue
		}
		switch m.Kind {
		case jsonrpc.KindRequest:
			s.clientRequest(line, m)
		case jsonrpc.KindNotification:
			s.clientNotification(line, m)
		case jsonrpc.KindResponse:
			s.clientResponse(line, m)
		case jsonrpc.KindBatch:
			// Batches exist only in 2025-03-26 and Claude Code never sends
			// them: pass them through untracked (no retry for them).
			s.forwardOrQueue(line)
		}
	}
}

// tooLongFromClient answers a request over the ceiling (already
// discarded as it streamed) with an error to its id, read from the head:
// it was not sent. Anything else over it is only logged.
func (s *Shim) tooLongFromClient(tl *jsonrpc.TooLongError) {
	m := jsonrpc.PeekHead(tl.Head)
	s.log.Warn("dropped a message from the client over the size ceiling", "bytes", tl.Len, "limit", tl.Limit, "kind", m.Kind, "method", m.Method)
	if m.Kind != jsonrpc.KindRequest {
		return
	}
	msg := fmt.Sprintf("mcp-heal: the request (%d bytes) is over the %d-byte message ceiling (mcp-heal shim --max-message); it was not sent to the server", tl.Len, tl.Limit)
	s.writeOut(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInvalidRequest, msg, map[string]any{"reason": "message-too-large", "bytes": tl.Len, "limit": tl.Limit}))
}

// badClientLine answers a line that is not a JSON-RPC message: -32700 with
// a null id when it is not JSON, -32600 (with its id when readable) when it
// is JSON but not a valid request. The shim keeps going.
func (s *Shim) badClientLine(line []byte, err error) {
	s.log.Warn("invalid message from client", "err", err)
	if errors.Is(err, jsonrpc.ErrNotJSON) || errors.Is(err, jsonrpc.ErrNotUTF8) {
		s.writeOut(jsonrpc.ErrorReply(jsonrpc.NullID, jsonrpc.CodeParseError, "Parse error: "+err.Error(), nil))
		return
	}
	id := jsonrpc.NullID
	if r := gjson.GetBytes(line, "id"); r.Type == gjson.String || (r.Type == gjson.Number && !errors.Is(err, jsonrpc.ErrInvalidID)) {
		id = []byte(r.Raw)
	}
	s.writeOut(jsonrpc.ErrorReply(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil))
}

func (s *Shim) clientRequest(line []byte, m jsonrpc.Msg) {
	now := s.clk.Now()
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if !s.isUp() && m.Method == "ping" && s.answerPingLocally(line) {
		// While the server is down or being replayed, answer pings at once
		// so the client does not conclude the connection is dead.
		s.mu.Unlock()
		s.writeOut(jsonrpc.ResultReply(m.ID, []byte("{}")))
		return
	}
	if !s.isUp() && s.permanent && !s.failFast() {
		// A remote that cannot be used for a reason retrying will not
		// fix soon (an untrusted certificate, refused credentials):
		// answering at the deadline would come after Claude Code's own
		// connect timeout (the same 30 s), which hides the cause.
		reply := s.unreachableReply(&entry{id: m.ID, method: m.Method, at: now}, now)
		s.failedN++
		s.mu.Unlock()
		s.writeOut(reply)
		s.record()
		return
	}
	if !s.isUp() && s.failFast() {
		reply := s.failedReply(m.ID, m.Method)
		s.failedN++
		s.mu.Unlock()
		s.writeOut(reply)
		s.record()
		return
	}
	if s.inflight[string(m.ID)] != nil {
		// JSON-RPC 2.0 ids identify a request among those in flight; a
		// second one with the same id would replace the first in the
		// table and one of the two answers would be lost. Keep the first.
		s.mu.Unlock()
		s.log.Warn("client reused the id of a request in flight", "id", string(m.ID), "method", m.Method)
		s.writeOut(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeInvalidRequest,
			"Invalid Request: a request with id "+string(m.ID)+" is already in flight; this one was not sent", map[string]any{"reason": "duplicate-id"}))
		return
	}
	s.seq++
	e := &entry{
		id:     append([]byte(nil), m.ID...),
		line:   append([]byte(nil), line...),
		method: m.Method,
		seq:    s.seq,
		at:     now,
	}
	if m.Method == "tools/call" {
		e.tool = gjson.GetBytes(line, "params.name").String()
	}
	if strings.HasSuffix(m.Method, "/list") {
		// Only list methods paginate; skip scanning other (maybe huge)
		// params.
		e.cursor = gjson.GetBytes(line, "params.cursor").Exists()
	}
	s.sess.noteRequest(e)
	e.task = s.goneTaskOf(m.Method, line)
	s.inflight[string(e.id)] = e
	if !s.isUp() {
		s.queue = append(s.queue, qitem{e: e})
		s.wakeIdle()
		s.mu.Unlock()
		return
	}
	r := s.run
	e.run, e.sentAt = r, now
	s.mu.Unlock()
	if err := s.sendUp(r.conn, line, s.in.Buffered() > 0); err != nil {
		s.sendFailed(e, r)
	}
}

// isPermanent reports whether a Dial error says retrying will not help
// soon (bridge.DialError: TLS verification, NXDOMAIN, refused
// credentials, a refused redirect, no answer to the probe).
func isPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// answerQueueNow answers the queued requests at once after a permanent
// dial failure of a remote (a failed stdio server's queue goes through
// failReplies). Called with mu held.
func (s *Shim) answerQueueNow() [][]byte {
	if !s.permanent || s.failFast() {
		return nil
	}
	return s.answerQueued(s.clk.Now(), 0)
}

// answerQueued takes off the queue each request that has waited wait or
// longer (0: every one) and returns its answer: the server could not be
// reached. Called with mu held.
func (s *Shim) answerQueued(now time.Time, wait time.Duration) [][]byte {
	var out [][]byte
	keep := s.queue[:0]
	for _, it := range s.queue {
		if it.e == nil || (wait > 0 && now.Sub(it.e.at) < wait) {
			keep = append(keep, it)
			continue
		}
		delete(s.inflight, string(it.e.id))
		s.failedN++
		out = append(out, s.unreachableReply(it.e, now))
	}
	s.queue = keep
	return out
}

// sendFailed marks e as never delivered, so that the death of its
// connection re-sends it whatever the retry policy says.
func (s *Shim) sendFailed(e *entry, r *run) {
	s.mu.Lock()
	if s.inflight[string(e.id)] == e && e.run == r {
		e.undeliv = true
	}
	s.mu.Unlock()
}

func (s *Shim) clientNotification(line []byte, m jsonrpc.Msg) {
	switch m.Method {
	case "notifications/cancelled":
		raw := gjson.GetBytes(line, "params.requestId").Raw
		s.mu.Lock()
		e := s.inflight[raw]
		if e != nil && !e.injected {
			e.cancelled = true
			if e.run == s.run && s.isUp() && !e.ignored {
				// From now a ping the server stays deaf to is proof of
				// a hang (hang.go).
				e.run.live.Cancelled(s.clk.Now())
			}
			if e.run == nil {
				// Never sent: forget it, and do not send the cancellation.
				delete(s.inflight, raw)
				s.dropQueued(e)
				s.mu.Unlock()
				return
			}
		}
		s.mu.Unlock()
	case "notifications/initialized":
		s.mu.Lock()
		s.sess.initializedLine = append([]byte(nil), line...)
		dup := s.sess.replayedInit
		s.mu.Unlock()
		if dup {
			// A replay already told the new server; never twice.
			return
		}
	}
	s.forwardOrQueue(line)
}

// forwardOrQueue sends an untracked line now, or queues it in order.
func (s *Shim) forwardOrQueue(line []byte) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if !s.isUp() {
		s.queue = append(s.queue, qitem{line: append([]byte(nil), line...)})
		s.mu.Unlock()
		return
	}
	c := s.run.conn
	s.mu.Unlock()
	_ = s.sendUp(c, line, s.in.Buffered() > 0)
}

// clientResponse routes the client's answer to a server->client request
// back to the server that asked, under the server's own id. Answers meant
// for a dead server are dropped.
func (s *Shim) clientResponse(line []byte, m jsonrpc.Msg) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	r := s.srvReqs[string(m.ID)]
	if r == nil {
		s.mu.Unlock()
		s.log.Debug("dropped a client response to an unknown request", "id", string(m.ID))
		return
	}
	delete(s.srvReqs, string(m.ID))
	c := s.run.conn
	if s.run.down || r.run != s.run {
		s.mu.Unlock()
		s.log.Debug("dropped a client response meant for a server that is gone", "id", string(m.ID), "method", r.method)
		return
	}
	s.mu.Unlock()
	_ = s.sendUp(c, jsonrpc.ReplaceID(line, r.orig), false)
}

// dropQueued removes e from the queue. Called with mu held.
func (s *Shim) dropQueued(e *entry) {
	for i, q := range s.queue {
		if q.e == e {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return
		}
	}
}

func itoaID(n int64) []byte { return strconv.AppendInt(nil, n, 10) }
