package shim

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

var pingReq = jsonrpc.NewRequest([]byte("0"), "ping", nil)

// janitor runs the periodic checks: queue time-outs, hang detection and
// idle health probes. It owns the probe goroutines.
func (s *Shim) janitor(ctx context.Context) {
	tick := s.janitorTick()
	t := s.clk.NewTimer(tick)
	defer t.Stop()
	var probes sync.WaitGroup
	defer probes.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		s.expireQueue()
		s.checkStopped()
		if c, gen, req, why, calls := s.needProbe(); c != nil {
			probes.Add(1)
			go func() {
				defer probes.Done()
				s.probe(ctx, c, gen, req, why, calls)
			}()
		}
		// Set once the checks are done: a test on a fake clock knows
		// from the new timer and checkedAt that this tick's work was.
		s.mu.Lock()
		s.checkedAt = s.clk.Now()
		s.mu.Unlock()
		t.Reset(tick)
	}
}

// janitorTick is the janitor's period: a quarter of its shortest delay,
// between 5 ms and a second (a stopped server is seen within one).
func (s *Shim) janitorTick() time.Duration {
	tick := s.o.HangAfter
	for _, d := range []time.Duration{s.o.PingTimeout, s.o.QueueTimeout, s.o.PingInterval} {
		if d > 0 && d < tick {
			tick = d
		}
	}
	return min(max(tick/4, 5*time.Millisecond), time.Second)
}

// needProbe says whether to probe the current server now: a request has
// been outstanding longer than HangAfter (hang.go) with nothing heard
// from the server for as long, or the server was idle for PingInterval.
// calls are the client's requests outstanding when the probe goes out.
//
// The probe is a ping in the handshake era. The stateless era (2026-07-28)
// has no ping, so there the probe is the client's own server/discover
// request (a read every stateless server must answer). Until the client has
// negotiated an era the shim sends nothing of its own: a ping could violate
// the stateless era and a server/discover the handshake era.
func (s *Shim) needProbe() (c upstream.Conn, gen uint64, req []byte, why string, calls []*entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A server being killed is not probed: its end is already decided.
	if !s.isUp() || s.probing || s.conn == nil || s.conn == s.killedConn || s.sess.era == "" {
		return nil, 0, nil, "", nil
	}
	now := s.clk.Now()
	req = pingReq
	if s.sess.era == EraStateless {
		req = s.sess.discoverLine
		if req == nil {
			return nil, 0, nil, "", nil
		}
	}
	hang := s.hangAfter()
	if now.Sub(s.lastRecv) >= hang {
		for _, e := range s.inflight {
			if isCall(e, s.gen) && now.Sub(e.sentAt) >= hang {
				why = health.Outstanding(e.method, now.Sub(e.sentAt).Round(time.Millisecond))
				break
			}
		}
	}
	if why == "" && s.o.PingInterval > 0 && now.Sub(s.lastRecv) >= s.o.PingInterval && now.Sub(s.lastProbe) >= s.o.PingInterval {
		why = health.IdleCheck
	}
	if why == "" {
		return nil, 0, nil, "", nil
	}
	s.probing = true
	s.lastProbe = now
	return s.conn, s.gen, req, why, s.callsOn(s.gen)
}

// probe sends one liveness request and kills the server when it gets no
// answer (any answer, even an error, proves it alive) within PingTimeout.
func (s *Shim) probe(ctx context.Context, c upstream.Conn, gen uint64, req []byte, why string, calls []*entry) {
	_, err := s.inject(ctx, c, gen, req, s.o.PingTimeout, c.Done())
	if errors.Is(err, errTimeout) {
		probe := "a ping"
		if s.sessEra() == EraStateless {
			probe = "server/discover"
		}
		detail := health.HangDetail(why, probe, s.o.PingTimeout)
		s.log.Warn("server is hung; killing it", "reason", detail)
		s.kill(c, state.CauseHang, detail)
	}
	// The probe is over only once its verdict is acted on: cleared before
	// the kill, a janitor tick in between would probe the doomed server
	// again, and that probe could decide the kill a second time with a
	// staler reason.
	s.mu.Lock()
	s.probing = false
	if err == nil {
		s.lastProbe = s.clk.Now()
		s.notePong(calls, s.pongOpen)
	}
	s.pongOpen = nil
	s.mu.Unlock()
}

func (s *Shim) sessEra() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess.era
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
	var replies [][]byte
	keep := s.queue[:0]
	for _, it := range s.queue {
		if it.e == nil || now.Sub(it.e.at) < s.o.QueueTimeout {
			keep = append(keep, it)
			continue
		}
		delete(s.inflight, string(it.e.id))
		s.failedN++
		replies = append(replies, s.unreachableReply(it.e, now))
	}
	s.queue = keep
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
