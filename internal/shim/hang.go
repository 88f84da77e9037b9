package shim

import (
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/liveness"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// How a hang is told from a slow call: internal/liveness holds the rules
// (docs/shim.md, "Hangs"); this file feeds them what the shim sees and acts
// on their verdicts. With the defaults silence alone never kills a server:
// many cannot answer a ping while a tool runs (a single-threaded one, an
// event loop blocked by a synchronous call), and Claude Code alone would
// wait for them.
const (
	// DefaultPingTimeout: a ping unanswered this long is deafness.
	DefaultPingTimeout = liveness.DefaultPingTimeout
)

// CauseStopped starts the reason a stopped server was killed for
// (health.KillReason of state.CauseStopped).
const CauseStopped = "hung: stopped by a signal (SIGSTOP)"

// callsOn returns the client's calls outstanding on run r: its requests
// that wait for an answer. Called with mu held.
func (s *Shim) callsOn(r *run) []*entry {
	var out []*entry
	for _, e := range s.inflight {
		if isCall(e, r) {
			out = append(out, e)
		}
	}
	return out
}

// oldestCall is the oldest of the client's calls outstanding on the current
// server, nil when none. Called with mu held.
func (s *Shim) oldestCall() *entry {
	var old *entry
	for _, e := range s.inflight {
		if isCall(e, s.run) && (old == nil || e.sentAt.Before(old.sentAt)) {
			old = e
		}
	}
	return old
}

// isCall reports whether e is a call of the client's outstanding on run
// r, one the server owes an answer. A subscriptions/listen
// stream is no such call: it is open, silent, for as long as the session
// lasts. Nor is a request the client cancelled, or one the server ignored
// (it answered later requests and left this one: markIgnored).
func isCall(e *entry, r *run) bool {
	return e.run == r && !e.injected && !e.cancelled && !e.ignored && e.method != "subscriptions/listen"
}

// markIgnored notes that the server of run r answered the client's
// request e: its requests sent earlier and still unanswered were ignored
// (Claude Code 2.1.332's server/discover to a server that does not answer
// unknown methods). Such a request is no sign of a hang and is never re-sent
// (settle.go). Calls (tools/call) and listen streams are left out: a
// concurrent server answers them in any order. Called with mu held.
func (s *Shim) markIgnored(e *entry, r *run) {
	if len(s.inflight) == 0 {
		return
	}
	for _, o := range s.inflight {
		if o.run == r && o.seq < e.seq && !o.injected && !o.ignored &&
			o.method != "tools/call" && o.method != "subscriptions/listen" {
			o.ignored = true
			s.log.Debug("the server answered a later request and left this one unanswered: ignored", "id", string(o.id), "method", o.method)
		}
	}
}

// heard records a sign of life from the server of run r. Called with mu
// held.
func (s *Shim) heard(r *run) { r.live.Heard(s.clk.Now()) }

// checkTree looks at the server's process tree while a call is
// outstanding (or a cancelled one waits for its proof): the server itself
// stopped by a signal at two checks in a row gets it killed (it would
// answer neither the call nor a ping until someone continued it; an idle
// server stopped on purpose harms nobody until a call needs it), and CPU
// time spent is a sign of life. The server itself is the process the shim
// started or, behind a wrapper, the one whose stdout is the server's
// (procinfo.Tree.Server); a child or grandchild stopped alone is not: the
// server still reads, and may be waiting for it on purpose. Called by the
// janitor alone. Windows has no such stop (procinfo reports none).
func (s *Shim) checkTree() {
	s.mu.Lock()
	var c upstream.Conn
	method := ""
	r := s.serving()
	if r != nil && r.conn.PID() > 0 {
		if e := s.oldestCall(); e != nil {
			c, method = r.conn, e.method
		}
	}
	s.mu.Unlock()
	if c == nil {
		s.mu.Lock()
		s.run.live.Stopped(false)
		s.mu.Unlock()
		return
	}
	var out procinfo.Pipe
	if p, ok := c.(interface{ StdoutPipe() procinfo.Pipe }); ok {
		out = p.StdoutPipe()
	}
	t, err := procinfo.TreeOf(c.PID(), out)
	now := s.clk.Now()
	s.mu.Lock()
	if s.run != r {
		s.mu.Unlock()
		return
	}
	if err == nil && t.CPUKnown {
		r.live.CPU(now, t.CPU)
	}
	kill := r.live.Stopped(err == nil && t.Server != 0)
	s.mu.Unlock()
	if !kill {
		if err == nil && t.Stopped != 0 && t.Server == 0 {
			s.log.Debug("a process of the server's tree is stopped, not the server: no hang", "pid", t.Stopped)
		}
		return
	}
	detail := health.StoppedDetail(method, t.Server)
	s.log.Warn("server is stopped; killing it", "reason", detail)
	s.kill(r, state.CauseStopped, detail)
}

// liveConfig is the liveness settings of options o.
func liveConfig(o Options) liveness.Config {
	return liveness.Config{Look: o.Look, PingTimeout: o.PingTimeout, Deadline: o.HangAfter, Idle: o.PingInterval, KillOnCancel: o.KillOnCancel}
}

// quietNow is the janitor's judgement of the current run at now, once
// its checks are done: it updates what the record says of a server not
// answering and reports whether that changed. Called with mu held.
func (s *Shim) quietNow(now time.Time) bool {
	s.run.checked = now
	return s.judgeQuiet(now)
}

// requiet brings what the record says of a server not answering up to
// date at once when it says so: a sign of life, or a restart on purpose,
// makes it stale, and the janitor's next tick may come after the next
// PreToolUse hook read it (issue 30: a call right after the server's
// answer, or right after `mcp-heal heal`, was still told the server had
// answered nothing since its call was cancelled). Reports whether it
// changed. Called with mu held.
func (s *Shim) requiet() bool {
	if s.run.quiet == (quiet{}) {
		return false
	}
	return s.judgeQuiet(s.clk.Now())
}

// judgeQuiet is quietNow's judgement, without marking the janitor's
// check. Called with mu held.
func (s *Shim) judgeQuiet(now time.Time) bool {
	var q quiet
	if s.isUp() {
		// Silent since a cancel, the server is so still when a new call
		// waits behind the cancelled one.
		q = s.cancelQuiet(now)
	}
	if e := s.oldestCall(); e != nil && s.isUp() && q.since.IsZero() {
		if since, ok := s.run.live.Quiet(now, e.sentAt); ok {
			q = quiet{since: since, method: e.method, tool: e.tool}
		}
	}
	if q == s.run.quiet {
		return false
	}
	s.run.quiet = q
	return true
}

// cancelQuiet is the server not answering since the client cancelled a
// call it left unanswered (liveness.Detector.CancelDeaf): the zero quiet
// when it is not. Called with mu held.
func (s *Shim) cancelQuiet(now time.Time) quiet {
	at, ok := s.run.live.CancelDeaf(now)
	if !ok {
		return quiet{}
	}
	var last *entry
	for _, e := range s.inflight {
		if e.run == s.run && e.cancelled && !e.injected && (last == nil || e.sentAt.After(last.sentAt)) {
			last = e
		}
	}
	q := quiet{since: at, cancelled: true}
	if last != nil {
		q.method, q.tool = last.method, last.tool
	}
	return q
}

// quiet is a server not answering: since when (on s.clk), and the oldest
// call it owes; cancelled: since the client cancelled that call.
type quiet struct {
	since        time.Time
	method, tool string
	cancelled    bool
}

// quietRecord is q for the state record. Called with mu held.
func (s *Shim) quietRecord(q quiet) *state.NotAnswering {
	if q.since.IsZero() {
		return nil
	}
	// s.clk is a fake clock in tests: the record holds wall time.
	since := time.Now().Add(q.since.Sub(s.clk.Now())).UTC()
	return &state.NotAnswering{Since: since, Method: q.method, Tool: q.tool, Cancelled: q.cancelled}
}
