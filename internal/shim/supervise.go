package shim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/backoff"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// maxRetries is how many times one request is re-sent after the server died
// under it; a request that keeps killing its server is then answered with
// an error rather than crash-looping it forever.
const maxRetries = 2

// killer is implemented by upstreams that can be killed at once (a child
// process); others are closed.
type killer interface{ Kill(reason string) }

// supervise dials, replays, waits for the connection to die and dials
// again, until ctx is cancelled.
func (s *Shim) supervise(ctx context.Context) {
	bo := &backoff.Backoff{Min: s.o.BackoffMin, Max: s.o.BackoffMax}
	for ctx.Err() == nil {
		c, err := s.o.Dialer.Dial(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d := bo.Fail()
			s.dialFailed(err, bo.Failures())
			if !bo.Wait(ctx, d, s.restartCh) && ctx.Err() == nil {
				bo.Reset()
				s.clearFailed()
			}
			continue
		}
		gen := s.install(c)
		pumpDone := make(chan struct{})
		go s.pump(c, gen, pumpDone)
		if err := s.replay(c, gen, pumpDone); err != nil {
			if !errors.Is(err, errConnDied) {
				s.log.Warn("replay failed; restarting the server", "err", err)
				s.kill(c, "replay failed: "+err.Error())
			}
		} else {
			s.goUp(gen)
			if s.o.ResetOnUp {
				bo.Reset()
			}
		}

		purpose := ""
		select {
		case <-pumpDone:
		case <-ctx.Done():
			s.mu.Lock()
			s.stopping = true
			s.phase = state.Stopping
			s.mu.Unlock()
			c.Close()
			<-pumpDone
			s.connDied(gen, c.PID(), c.Exit(), false, "")
			return
		case <-s.restartCh:
			purpose = s.restartReason()
			if purpose == "" {
				purpose = "restart requested"
			}
			s.mu.Lock()
			s.up = false
			s.phase = state.Restarting
			s.mu.Unlock()
			s.record()
			c.Close()
			<-pumpDone
		}
		c.Close() // reaped already; releases the connection's resources
		ex := c.Exit()
		d := time.Duration(0)
		failedNow := false
		if purpose != "" {
			bo.Reset()
		} else {
			if time.Duration(ex.UptimeMS)*time.Millisecond >= s.o.StableAfter {
				bo.Reset()
			}
			d = bo.Fail()
			failedNow = bo.Failures() >= s.o.MaxFailures
		}
		s.connDied(gen, c.PID(), ex, failedNow, purpose)
		if ctx.Err() != nil {
			return
		}
		if d > 0 {
			if !bo.Wait(ctx, d, s.restartCh) && ctx.Err() == nil {
				bo.Reset()
				s.clearFailed()
			}
		}
	}
}

// install makes c the current connection and returns its generation.
func (s *Shim) install(c upstream.Conn) uint64 {
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.conn = c
	s.childPID = c.PID()
	s.childAt = time.Now()
	s.lastRecv = time.Now()
	s.dialFails = 0
	s.permanent = false
	if s.gen > 1 {
		s.phase = state.Restarting
	}
	s.mu.Unlock()
	s.event("spawn", "pid", c.PID(), "generation", gen)
	s.record()
	return gen
}

// goUp marks the connection ready and releases the queue, in arrival order
// (re-sent requests first), holding sendMu so that new client messages come
// after it.
func (s *Shim) goUp(gen uint64) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.gen != gen || s.conn == nil {
		s.mu.Unlock()
		return
	}
	c := s.conn
	recovered := s.failed
	s.up = true
	s.failed = false
	s.phase = state.Running
	q := s.queue
	s.queue = nil
	now := time.Now()
	for _, it := range q {
		if it.e != nil {
			it.e.gen, it.e.sentAt = gen, now
		}
	}
	s.mu.Unlock()
	if recovered {
		s.event("recovered", "pid", c.PID())
	}
	s.record()
	for i, it := range q {
		line := it.line
		if it.e != nil {
			line = it.e.line
		}
		if err := s.sendUp(c, line, i < len(q)-1); err != nil {
			if it.e != nil {
				s.sendFailed(it.e, gen)
			}
		}
	}
}

// replay brings a new server to the client's session: in the handshake era
// the client's own initialize (result swallowed, protocol version checked),
// notifications/initialized, the last logging/setLevel and every resource
// subscription. The stateless era has no session: open
// subscriptions/listen requests are re-sent with the queue.
func (s *Shim) replay(c upstream.Conn, gen uint64, dead <-chan struct{}) error {
	s.mu.Lock()
	ss := s.sess
	subs := ss.subList()
	s.mu.Unlock()
	if ss.era != EraHandshake || ss.initLine == nil {
		return nil
	}
	resp, err := s.inject(c, gen, ss.initLine, s.o.ReplayTimeout, dead)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if r := gjson.GetBytes(resp, "error"); r.Exists() {
		return fmt.Errorf("initialize answered with an error: %s", r.Get("message").String())
	}
	if v := gjson.GetBytes(resp, "result.protocolVersion").String(); v != ss.version {
		// The client negotiated ss.version and will keep speaking it; a
		// server that now answers otherwise is still used, and said so.
		msg := fmt.Sprintf("restarted server negotiated protocol version %q, the client uses %q", v, ss.version)
		s.log.Warn(msg)
		s.mu.Lock()
		s.lastErr = msg
		s.mu.Unlock()
	}
	init := ss.initializedLine
	if init == nil {
		init = jsonrpc.NewNotification("notifications/initialized", nil)
	}
	s.sendMu.Lock()
	err = c.Send(init)
	s.sendMu.Unlock()
	if err != nil {
		return fmt.Errorf("initialized: %w", err)
	}
	s.mu.Lock()
	s.sess.replayedInit = true
	s.mu.Unlock()
	if ss.setLevel != nil {
		if _, err := s.inject(c, gen, ss.setLevel, s.o.ReplayTimeout, dead); err != nil {
			return fmt.Errorf("logging/setLevel: %w", err)
		}
	}
	for _, uri := range subs {
		params := fmt.Appendf(nil, `{"uri":%s}`, jsonString(uri))
		if _, err := s.inject(c, gen, jsonrpc.NewRequest([]byte("0"), "resources/subscribe", params), s.o.ReplayTimeout, dead); err != nil {
			return fmt.Errorf("resources/subscribe %s: %w", uri, err)
		}
	}
	if ss.toolsCap {
		s.refreshTools(c, gen, dead)
	}
	return nil
}

// refreshTools asks the new server for its tools: the retry policy must
// follow the new server's annotations, and when its catalog differs from
// the one the client last listed, and the first InitializeResult declared
// tools.listChanged, the client is told (notifications/tools/list_changed),
// as the server itself could have. A failure here is not fatal.
func (s *Shim) refreshTools(c upstream.Conn, gen uint64, dead <-chan struct{}) {
	resp, err := s.inject(c, gen, jsonrpc.NewRequest([]byte("0"), "tools/list", nil), s.o.ReplayTimeout, dead)
	if err != nil || !gjson.GetBytes(resp, "result.tools").IsArray() {
		return
	}
	tools := gjson.GetBytes(resp, "result.tools").Raw
	s.mu.Lock()
	s.sess.notePolicies(resp)
	changed := s.sess.toolsSeen != nil && !gjson.GetBytes(resp, "result.nextCursor").Exists() && string(s.sess.toolsSeen) != tools
	notify := changed && s.sess.toolsListChanged
	if changed {
		s.sess.toolsSeen = []byte(tools)
	}
	s.mu.Unlock()
	if changed {
		s.event("tools-changed", "notified", notify)
	}
	if notify {
		s.writeOut(jsonrpc.NewNotification("notifications/tools/list_changed", nil))
	}
}

var (
	errConnDied = errors.New("the server exited")
	errTimeout  = errors.New("no answer in time")
)

// inject sends req (its id replaced by a fresh injected id) on c and waits
// for the answer, which never reaches the client.
func (s *Shim) inject(c upstream.Conn, gen uint64, req []byte, timeout time.Duration, dead <-chan struct{}) ([]byte, error) {
	s.mu.Lock()
	var id []byte
	for {
		s.nextInjID++
		id = fmt.Appendf(nil, `"mcp-heal-%d"`, s.nextInjID)
		if s.inflight[string(id)] == nil {
			break
		}
	}
	e := &entry{id: id, injected: true, waiter: make(chan []byte, 1), gen: gen, at: time.Now(), method: gjson.GetBytes(req, "method").String()}
	s.inflight[string(id)] = e
	s.mu.Unlock()
	line := replaceID(req, id)
	t := time.NewTimer(timeout)
	defer t.Stop()
	sent := make(chan error, 1)
	// The send runs apart so that a server that stopped reading its stdin
	// (or a writer stuck behind one) still times out; it ends when the
	// connection is killed.
	go func() {
		s.sendMu.Lock()
		defer s.sendMu.Unlock()
		sent <- c.Send(line)
	}()
	forget := func() {
		s.mu.Lock()
		if s.inflight[string(id)] == e {
			delete(s.inflight, string(id))
		}
		s.mu.Unlock()
	}
	for {
		select {
		case err := <-sent:
			if err != nil {
				forget()
				return nil, fmt.Errorf("send: %w", err)
			}
			sent = nil
		case r, ok := <-e.waiter:
			if !ok {
				return nil, errConnDied
			}
			return r, nil
		case <-dead:
			forget()
			return nil, errConnDied
		case <-t.C:
			forget()
			return nil, errTimeout
		}
	}
}

func (s *Shim) kill(c upstream.Conn, reason string) {
	s.event("kill", "pid", c.PID(), "reason", reason)
	if k, ok := c.(killer); ok {
		k.Kill(reason)
		return
	}
	go c.Close()
}

// dialFailed records a failed start.
func (s *Shim) dialFailed(err error, failures int) {
	s.mu.Lock()
	s.dialFails++
	s.lastErr = oneLine(err.Error())
	s.permanent = isPermanent(err)
	// A remote that refuses connections is down, not crash-looping: its
	// calls wait in the queue for QueueTimeout, so it is marked failed
	// (and hooks deny calls to it) only once an outage has lasted that
	// long. A stdio command that will not start is failed after
	// MaxFailures quick tries.
	if !s.failed && (s.permanent || failures >= s.o.MaxFailures &&
		(s.mode != state.ModeRemote || time.Since(s.downSince) >= s.o.QueueTimeout)) {
		s.failed = true
	}
	s.phase = state.Backoff
	if s.failed {
		s.phase = state.Failed
	}
	var fail []qitem
	if s.failFast() {
		fail = s.takeQueue()
	}
	replies := append(s.failReplies(fail), s.answerQueueNow()...)
	s.mu.Unlock()
	s.event("start-failed", "err", err.Error(), "failures", failures)
	for _, r := range replies {
		s.writeOut(r)
	}
	s.record()
}

func (s *Shim) clearFailed() {
	s.mu.Lock()
	s.failed = false
	s.mu.Unlock()
}

// connDied settles every request of generation gen after its connection
// died: re-send what is safe, answer the rest with one error, cancel
// server->client requests the client still has open.
func (s *Shim) connDied(gen uint64, pid int, ex upstream.Exit, failedNow bool, purpose string) {
	now := time.Now()
	s.mu.Lock()
	if s.gen == gen {
		s.conn = nil
		s.up = false
		s.childPID = 0
		s.downSince = now
	}
	s.lastExit = &ex
	if len(ex.StderrTail) > 0 {
		s.stderr = ex.StderrTail
	}
	stopping := s.stopping
	if !stopping {
		s.restarts++
		s.phase = state.Restarting
		if failedNow {
			s.failed = true
			s.phase = state.Failed
		}
		if purpose == "" {
			s.lastErr = "server " + ex.Reason
		}
	}
	undeliv := make(map[string]bool, len(ex.Undelivered))
	for _, id := range ex.Undelivered {
		undeliv[string(id)] = true
	}
	var mine []*entry
	for _, e := range s.inflight {
		if e.gen == gen {
			mine = append(mine, e)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].seq < mine[j].seq })
	var retry []qitem
	var replies [][]byte
	for _, e := range mine {
		key := string(e.id)
		if e.injected {
			delete(s.inflight, key)
			close(e.waiter)
			continue
		}
		if e.cancelled || stopping {
			delete(s.inflight, key)
			continue
		}
		if now.Sub(e.sentAt) >= s.o.StableAfter {
			// It ran long before the server died: not a request that
			// kills its server at once (and a subscriptions/listen stream
			// must survive any number of unrelated restarts).
			e.retries = 0
		}
		reply := s.settle(e, ex, undeliv[key] || e.undeliv, purpose)
		if reply == nil {
			e.gen = 0
			e.retries++
			e.undeliv = false
			s.retried++
			retry = append(retry, qitem{e: e})
			continue
		}
		delete(s.inflight, key)
		s.failedN++
		replies = append(replies, reply)
	}
	s.queue = append(retry, s.queue...)
	if s.failFast() {
		replies = append(replies, s.failReplies(s.takeQueue())...)
	}
	// Server->client requests of the dead server: the client may still be
	// working on them (an elicitation dialog): tell it they are void.
	var cancels [][]byte
	for cid, r := range s.srvReqs {
		if r.gen == gen && !stopping {
			delete(s.srvReqs, cid)
			cancels = append(cancels, jsonrpc.NewNotification("notifications/cancelled",
				fmt.Appendf(nil, `{"requestId":%s,"reason":"the MCP server restarted; this request is void"}`, cid)))
		}
	}
	s.mu.Unlock()

	attrs := []any{"pid", pid, "reason", ex.Reason, "uptime_ms", ex.UptimeMS, "generation", gen, "retried", len(retry), "failed_calls", len(replies)}
	if ex.Code != nil {
		attrs = append(attrs, "code", *ex.Code)
	}
	if ex.Signal != "" {
		attrs = append(attrs, "signal", ex.Signal)
	}
	if purpose != "" {
		attrs = append(attrs, "purpose", purpose)
	}
	s.event("exit", attrs...)
	if failedNow && !stopping {
		s.event("failed", "reason", ex.Reason)
	}
	for _, r := range replies {
		s.writeOut(r)
	}
	for _, c := range cancels {
		s.writeOut(c)
	}
	s.record()
}

// settle decides the fate of request e whose server died: nil means re-send
// it, otherwise the error reply to send. Called with mu held.
func (s *Shim) settle(e *entry, ex upstream.Exit, undelivered bool, purpose string) []byte {
	if undelivered {
		return nil
	}
	if e.method == "server/discover" && e.retries >= 1 {
		// Claude Code pins a server that dies on the probe to the
		// handshake era; let it fall back the same way.
		return jsonrpc.ErrorReply(e.id, jsonrpc.CodeMethodNotFound, "Method not found (the server exited while answering server/discover)", map[string]any{"reason": "server-exited", "retried": true, "exit": ex.Exit})
	}
	if e.retries >= maxRetries {
		return s.diedReply(e, ex, "retries-exhausted", purpose,
			fmt.Sprintf("the server process %s while this call was running, for the %s time in a row; it was restarted; the call was not retried again and may or may not have taken effect", ex.Reason, ordinal(e.retries+1)))
	}
	if e.cursor {
		return s.diedReply(e, ex, "cursor-lost", purpose,
			fmt.Sprintf("the server process %s while this page was being listed; it was restarted and the pagination cursor is no longer valid: list again from the start", ex.Reason))
	}
	if e.method == "tools/call" {
		p, known := s.sess.tools[e.tool]
		switch {
		case s.o.NoRetry:
			return s.diedReply(e, ex, "not-retried", purpose, s.notRetriedMsg(ex, "retries are turned off for this server"))
		case known && (p.readOnly || p.idempotent):
			return nil
		case !known:
			return s.diedReply(e, ex, "not-retried", purpose, s.notRetriedMsg(ex, "the tool was not in the last tools/list"))
		default:
			return s.diedReply(e, ex, "not-retried", purpose, s.notRetriedMsg(ex, "the tool is not marked read-only or idempotent"))
		}
	}
	if retryable[e.method] {
		return nil
	}
	return s.diedReply(e, ex, "not-retried", purpose, s.notRetriedMsg(ex, e.method+" is not safe to re-send"))
}

func (s *Shim) notRetriedMsg(ex upstream.Exit, why string) string {
	return fmt.Sprintf("the server process %s while this call was running; it was restarted; the call was not retried (%s) and may or may not have taken effect", ex.Reason, why)
}

// diedReply is the -32603 error for a request lost with its server.
func (s *Shim) diedReply(e *entry, ex upstream.Exit, reason, purpose, msg string) []byte {
	if purpose != "" {
		msg = fmt.Sprintf("the server was restarted on purpose (%s) while this call was running; the call was not retried and may or may not have taken effect", purpose)
	}
	data := errData{Reason: reason, Retried: false, Server: s.o.Name, Method: e.method, Tool: e.tool, Exit: &ex.Exit, StderrTail: ex.StderrTail, Attempts: e.retries + 1}
	return jsonrpc.ErrorReply(e.id, jsonrpc.CodeInternalError, "MCP server "+quoteName(s.o.Name)+": "+msg, data)
}

// failFast reports whether requests must be answered now rather than
// queued: a failed stdio server. A remote upstream keeps requests queued
// for QueueTimeout instead. Called with mu held.
func (s *Shim) failFast() bool {
	return s.failed && s.mode != state.ModeRemote
}

func (s *Shim) takeQueue() []qitem {
	q := s.queue
	s.queue = nil
	return q
}

// failReplies answers queued requests of a failed server; queued
// notifications are dropped. Called with mu held.
func (s *Shim) failReplies(q []qitem) [][]byte {
	var out [][]byte
	for _, it := range q {
		if it.e == nil {
			continue
		}
		delete(s.inflight, string(it.e.id))
		s.failedN++
		out = append(out, s.failedReply(it.e.id, it.e.method))
	}
	return out
}

// failedReply is the error for a request that cannot be served because the
// server is in a crash loop. Called with mu held.
func (s *Shim) failedReply(id []byte, method string) []byte {
	last := s.lastErr
	var ex *state.Exit
	if s.lastExit != nil {
		ex = &s.lastExit.Exit
		last = "it " + s.lastExit.Reason
		if s.lastExit.UptimeMS >= 0 {
			last += fmt.Sprintf(" after %s", time.Duration(s.lastExit.UptimeMS)*time.Millisecond)
		}
	}
	if s.dialFails > 0 {
		last = "it could not be started: " + s.lastErr
	}
	msg := fmt.Sprintf("MCP server %s is failing (crash loop): %s", quoteName(s.o.Name), last)
	if len(s.stderr) > 0 {
		msg += "; last stderr: " + lastLines(s.stderr, 3)
	}
	msg += fmt.Sprintf("; mcp-heal keeps restarting it (at most every %s); this call was not sent", s.o.BackoffMax)
	data := errData{Reason: "server-failed", Server: s.o.Name, Method: method, Exit: ex, StderrTail: s.stderr, Restarts: s.restarts, Target: s.target}
	return jsonrpc.ErrorReply(id, jsonrpc.CodeInternalError, msg, data)
}
