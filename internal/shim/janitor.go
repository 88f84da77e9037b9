package shim

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/liveness"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

var pingReq = jsonrpc.NewRequest([]byte("0"), "ping", nil)

// janitor runs the periodic checks: queue time-outs, liveness (hang.go)
// and the state record's "not answering". It owns the probe goroutines.
func (s *Shim) janitor(ctx context.Context) {
	tick := s.janitorTick()
	t := s.clk.NewTimer(tick)
	due := s.clk.Now().Add(tick)
	defer t.Stop()
	var probes sync.WaitGroup
	defer probes.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		s.resumedAfter(due)
		s.expireQueue()
		s.checkTree()
		if p := s.due(); p != nil {
			probes.Add(1)
			go func() {
				defer probes.Done()
				s.probe(ctx, p)
			}()
		}
		// Judged once the checks are done: a test on a fake clock knows
		// from the new timer and the run's checked that this tick's work
		// was.
		s.mu.Lock()
		changed := s.quietNow(s.clk.Now())
		s.mu.Unlock()
		if changed {
			s.record()
		}
		t.Reset(tick)
		due = s.clk.Now().Add(tick)
	}
}

// TickGap is how late a janitor's tick must come to count as a gap in the
// shim's own life: the shim was stopped (SIGSTOP, Ctrl-Z of its job, a
// frozen container, a debugger) or the machine slept. A loaded machine
// delays a timer by milliseconds, seldom by a second.
const TickGap = 2 * time.Second

// resumedAfter checks the tick due at due (on the monotonic clock): when
// it came TickGap late or more, the shim did not run meanwhile and saw
// nothing of the server, so the liveness rules' clocks start again now
// (liveness.Detector.Resumed): stopped time never counts as silence.
func (s *Shim) resumedAfter(due time.Time) {
	now := s.clk.Now()
	late := now.Sub(due)
	if late < TickGap {
		return
	}
	s.mu.Lock()
	s.run.live.Resumed(now)
	s.mu.Unlock()
	s.log.Info("the shim did not run for a while (stopped, or the machine slept): the liveness clocks start again", "gap", late.Round(time.Millisecond))
}

// janitorTick is the janitor's period: a quarter of its shortest delay,
// between 5 ms and a second (a stopped server is seen within two).
func (s *Shim) janitorTick() time.Duration {
	c := s.liveCfg
	tick := c.Look
	for _, d := range []time.Duration{c.PingTimeout, s.o.QueueTimeout, c.Idle} {
		if d > 0 && d < tick {
			tick = d
		}
	}
	return min(max(tick/4, 5*time.Millisecond), time.Second)
}

// probeReq is one liveness probe to send.
type probeReq struct {
	r   *run
	req []byte
}

// due asks the liveness rules what to do now (hang.go): send a probe (it
// is returned), kill the server, or nothing.
//
// The probe is a ping in the handshake era. The stateless era (2026-07-28)
// has no ping, so there the probe is the client's own server/discover
// request (a read every stateless server must answer). Until the client has
// negotiated an era the shim sends nothing of its own: a ping could violate
// the stateless era and a server/discover the handshake era.
func (s *Shim) due() *probeReq {
	s.mu.Lock()
	// A server being killed is not probed: its end is already decided.
	r := s.serving()
	if r == nil || s.sess.era == "" {
		s.mu.Unlock()
		return nil
	}
	req, probe := pingReq, "a ping"
	if s.sess.era == EraStateless {
		req, probe = s.sess.discoverLine, "server/discover"
		if req == nil {
			s.mu.Unlock()
			return nil
		}
	}
	now := s.clk.Now()
	var call time.Time
	e := s.oldestCall()
	if e != nil {
		call = e.sentAt
	}
	a := r.live.Due(now, call)
	s.mu.Unlock()
	switch a.Kind {
	case liveness.Probe:
		return &probeReq{r: r, req: req}
	case liveness.Kill:
		detail := s.hangDetail(a, e, probe)
		s.log.Warn("server is hung; killing it", "reason", detail)
		s.kill(r, state.CauseHang, detail)
	}
	return nil
}

// hangDetail words a kill's proof.
func (s *Shim) hangDetail(a liveness.Action, e *entry, probe string) string {
	timeout := s.liveCfg.PingTimeout
	switch a.Why {
	case liveness.ForCancel:
		return health.CancelledDetail(probe, timeout)
	case liveness.ForIdle:
		return health.HangDetail(health.IdleCheck, probe, timeout)
	}
	method := "a request"
	if e != nil {
		method = e.method
	}
	return health.HangDetail(health.Outstanding(method, a.Silent.Round(time.Millisecond))+" (--hang-after "+s.liveCfg.Deadline.String()+")", probe, timeout)
}

// probe sends one liveness request and tells the rules whether an answer
// (any answer, even an error, proves the server reads) came within
// PingTimeout.
func (s *Shim) probe(ctx context.Context, p *probeReq) {
	_, err := s.inject(ctx, p.r, p.req, s.liveCfg.PingTimeout, p.r.conn.Done())
	s.mu.Lock()
	if err == nil {
		p.r.live.Answered(s.clk.Now())
	} else {
		p.r.live.Unanswered()
	}
	s.mu.Unlock()
}

// expireQueue answers requests queued longer than QueueTimeout while the
// server stays down or unreachable.
func (s *Shim) expireQueue() {
	if s.o.QueueTimeout <= 0 {
		return
	}
	now := s.clk.Now()
	s.mu.Lock()
	if s.isUp() || len(s.queue) == 0 {
		s.mu.Unlock()
		return
	}
	replies := s.answerQueued(now, s.o.QueueTimeout)
	s.mu.Unlock()
	for _, r := range replies {
		s.writeOut(r)
	}
	if len(replies) > 0 {
		s.record()
	}
}

// unreachableReply names the target, what was tried and for how long.
// Called with mu held.
func (s *Shim) unreachableReply(e *entry, now time.Time) []byte {
	waited := now.Sub(e.at).Round(time.Millisecond)
	down := now.Sub(s.downSince).Round(time.Millisecond)
	c := health.Cause{Kind: state.CauseStartFailed, Remote: s.mode == state.ModeRemote, Detail: s.lastErr}
	if s.dialFails == 0 && s.lastExit != nil {
		c = s.causeOf(s.lastExit.Exit)
	}
	msg := health.UnreachableError(s.o.Name, s.target, c, s.dialFails, down, waited)
	data := errData{Reason: "unreachable", Server: s.o.Name, Method: e.method, Tool: e.tool, Target: s.target, WaitedMS: waited.Milliseconds(), LastError: s.lastErr, Attempts: s.dialFails}
	if s.lastExit != nil {
		data.Exit = &s.lastExit.Exit
	}
	return jsonrpc.ErrorReply(e.id, jsonrpc.CodeInternalError, msg, data)
}
