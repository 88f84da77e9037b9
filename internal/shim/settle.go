package shim

import (
	"fmt"
	"sort"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// connDied settles every request of run r after its connection died:
// re-send what is safe, answer the rest with one error, cancel
// server->client requests the client still has open.
func (s *Shim) connDied(r *run, ex upstream.Exit, failedNow bool, purpose string) {
	now := s.clk.Now()
	pid := r.conn.PID()
	s.mu.Lock()
	r.down, r.childPID = true, 0
	if s.run == r {
		s.downSince = now
	}
	s.lastExit = &ex
	if len(ex.StderrTail) > 0 {
		s.stderr = ex.StderrTail
	}
	stopping := s.isStopping()
	if !stopping {
		if purpose != "" {
			s.noteRestart(health.Cause{Kind: state.CauseRestart, Detail: purpose})
		} else {
			s.noteRestart(s.causeOf(ex.Exit))
		}
		s.restarts++
		switch {
		case failedNow:
			s.setPhase(state.Failed)
		case !s.isFailed():
			s.setPhase(state.Restarting)
		}
		if purpose == "" {
			s.lastErr = "server " + ex.Reason
		}
	}
	switch {
	case s.mode == state.ModeRemote:
		r.tasks = nil // a lost connection is no proof its tasks ended (tasks.go)
	case purpose != "":
		s.tasksGone(r, health.Cause{Kind: state.CauseRestart, Detail: purpose})
	default:
		s.tasksGone(r, s.causeOf(ex.Exit))
	}
	undeliv := make(map[string]bool, len(ex.Undelivered))
	for _, id := range ex.Undelivered {
		undeliv[string(id)] = true
	}
	var mine []*entry
	for _, e := range s.inflight {
		if e.run == r {
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
			e.run = nil
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
	for cid, sr := range s.srvReqs {
		if sr.run == r && !stopping {
			delete(s.srvReqs, cid)
			cancels = append(cancels, jsonrpc.NewNotification("notifications/cancelled",
				fmt.Appendf(nil, `{"requestId":%s,"reason":%s}`, cid, jsonString(health.RequestVoid))))
		}
	}
	s.mu.Unlock()

	attrs := []any{"pid", pid, "reason", ex.Reason, "uptime_ms", ex.UptimeMS, "generation", r.gen, "retried", len(retry), "failed_calls", len(replies)}
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
// it, otherwise the error reply to send. A call whose answer the death cut
// (stream.go) is re-sent by the same rule as any other, once: the client
// skips the cut line (Claude Code does: docs/claude-code-behaviour.md) and
// gets the new process's answer; else it gets the one account of the cut.
// Called with mu held.
func (s *Shim) settle(e *entry, ex upstream.Exit, undelivered bool, purpose string) []byte {
	reply := s.settleRule(e, ex, undelivered, purpose)
	if e.cut > 0 {
		if reply != nil || e.recut {
			return s.cutReply(e, ex, purpose)
		}
		e.cut, e.recut = 0, true
	}
	return reply
}

// settleRule is settle's rule for a request that got no answer.
func (s *Shim) settleRule(e *entry, ex upstream.Exit, undelivered bool, purpose string) []byte {
	if t := s.goneTaskOf(e.method, e.line); t != "" {
		e.task = t // tasks.go: its task ended with this server
	}
	if undelivered {
		return nil
	}
	if e.ignored {
		// Left unanswered while the server answered later requests
		// (hang.go: markIgnored): never re-sent, answered once.
		return s.ignoredReply(e, ex)
	}
	if e.method == "server/discover" && e.retries >= 1 {
		// Claude Code pins a server that dies on the probe to the
		// handshake era; let it fall back the same way.
		return jsonrpc.ErrorReply(e.id, jsonrpc.CodeMethodNotFound, health.DiscoverDied, map[string]any{"reason": "server-exited", "retried": true, "exit": ex.Exit})
	}
	if e.retries >= maxRetries {
		return s.diedReply(e, ex, "retries-exhausted", "retries-exhausted", purpose)
	}
	if e.cursor {
		return s.diedReply(e, ex, "cursor-lost", "cursor-lost", purpose)
	}
	if e.method == "tools/call" {
		p, known := s.sess.tools[e.tool]
		switch {
		case s.o.NoRetry:
			return s.diedReply(e, ex, "not-retried", "no-retry", purpose)
		case known && (p.readOnly || p.idempotent):
			return nil
		case !known:
			return s.diedReply(e, ex, "not-retried", "unknown-tool", purpose)
		default:
			return s.diedReply(e, ex, "not-retried", "unsafe-tool", purpose)
		}
	}
	if retryable[e.method] || (e.task != "" && (e.method == "tasks/get" || e.method == "tasks/cancel")) {
		return nil
	}
	return s.diedReply(e, ex, "not-retried", "unsafe-method", purpose)
}

// ignoredReply answers a request the dead server had ignored. A
// server/discover gets -32601, as a server that does not know it would
// answer (Claude Code has fallen back to initialize); others a -32603 that
// says why it was not re-sent. Neither tells the model of the restart:
// the client stopped waiting for it. Called with mu held.
func (s *Shim) ignoredReply(e *entry, ex upstream.Exit) []byte {
	if e.method == "server/discover" {
		return jsonrpc.ErrorReply(e.id, jsonrpc.CodeMethodNotFound, health.DiscoverIgnored, map[string]any{"reason": "ignored", "retried": false})
	}
	due := s.note.due
	r := s.diedReply(e, ex, "ignored", "ignored", "")
	s.note.due = due
	return r
}

// diedReply is the -32603 error for a request lost with its server: reason
// is its data.reason, rule the retry rule that kept it from being re-sent
// (health.NotResentWhy), purpose why the server was restarted on purpose
// ("" when it ended by itself). Called with mu held.
func (s *Shim) diedReply(e *entry, ex upstream.Exit, reason, rule, purpose string) []byte {
	c := s.causeOf(ex.Exit)
	if purpose != "" {
		c, rule = health.Cause{Kind: state.CauseRestart, Detail: purpose}, "restart"
	}
	o := health.Outcome{Kind: health.OutcomeNotResent, Why: health.NotResentWhy(rule, e.retries+1, e.method), Effect: !e.cursor}
	msg := health.DiedError(s.o.Name, c, o, e.cursor, continuationAdvice(e))
	// This error tells the model of the restart: no note on a later answer.
	s.note.due = false
	data := errData{Reason: reason, Retried: false, Server: s.o.Name, Method: e.method, Tool: e.tool, Exit: &ex.Exit, StderrTail: ex.StderrTail, Attempts: e.retries + 1}
	return jsonrpc.ErrorReply(e.id, jsonrpc.CodeInternalError, msg, data)
}

// causeOf is the cause of an exit of this shim's upstream.
func (s *Shim) causeOf(e state.Exit) health.Cause {
	return health.CauseOf(e, s.mode == state.ModeRemote)
}

// failFast reports whether requests must be answered now rather than
// queued: a failed stdio server. A remote upstream keeps requests queued
// for QueueTimeout instead. Called with mu held.
func (s *Shim) failFast() bool {
	return s.isFailed() && s.mode != state.ModeRemote
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
// server is in a crash loop, or its command cannot start at all (the
// words are internal/health's). Called with mu held.
func (s *Shim) failedReply(id []byte, method string) []byte {
	if s.cantStart {
		data := errData{Reason: "server-cannot-start", Server: s.o.Name, Method: method, Restarts: s.restarts, Target: s.target}
		return jsonrpc.ErrorReply(id, jsonrpc.CodeInternalError, health.CannotStartError(s.o.Name, s.lastErr), data)
	}
	c, after := health.Cause{Kind: state.CauseStartFailed, Remote: s.mode == state.ModeRemote, Detail: s.lastErr}, time.Duration(-1)
	var ex *state.Exit
	if s.lastExit != nil {
		ex = &s.lastExit.Exit
		if s.dialFails == 0 {
			c = s.causeOf(*ex)
			if ex.UptimeMS >= 0 {
				after = time.Duration(ex.UptimeMS) * time.Millisecond
			}
		}
	}
	stderr := ""
	if len(s.stderr) > 0 {
		stderr = lastLines(s.stderr, 3)
	}
	data := errData{Reason: "server-failed", Server: s.o.Name, Method: method, Exit: ex, StderrTail: s.stderr, Restarts: s.restarts, Target: s.target}
	return jsonrpc.ErrorReply(id, jsonrpc.CodeInternalError, health.CrashLoopError(s.o.Name, c, after, stderr, s.o.BackoffMax), data)
}
