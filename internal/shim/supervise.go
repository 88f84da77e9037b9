package shim

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/backoff"
	"github.com/mcp-heal/mcp-heal/internal/health"
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
	bo := &backoff.Backoff{Min: s.o.BackoffMin, Max: s.o.BackoffMax, Clock: s.clk}
	for ctx.Err() == nil {
		s.noteCommand()
		c, err := s.o.Dialer.Dial(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d := bo.Fail()
			s.dialFailed(err, bo.Failures())
			if s.waitStartable(ctx) {
				bo.Reset()
				s.restartFresh()
				continue
			}
			if !bo.Wait(ctx, d, s.restartCh) && ctx.Err() == nil {
				bo.Reset()
				s.restartFresh()
			}
			continue
		}
		r := s.install(c)
		pumpDone := make(chan struct{})
		go s.pump(r, pumpDone)
		if err := s.replay(ctx, r, pumpDone); err != nil {
			// A shutdown during the replay is handled below with the
			// usual stop ladder, like one at any other time.
			if !errors.Is(err, errConnDied) && ctx.Err() == nil {
				s.log.Warn("replay failed; restarting the server", "err", err)
				s.kill(r, state.CauseReplay, oneLine(err.Error()))
			}
		} else {
			s.goUp(r)
			if s.o.ResetOnUp {
				bo.Reset()
			}
		}

		purpose := ""
		select {
		case <-pumpDone:
		case <-ctx.Done():
			s.stop()
			closeOrDetach(c)
			<-pumpDone
			s.connDied(r, c.Exit(), false, "")
			return
		case <-s.restartCh:
			purpose = s.restartReason()
			if purpose == "" {
				purpose = "restart requested"
			}
			s.mu.Lock()
			s.setPhase(state.Restarting)
			s.requiet() // the process it spoke of is on its way out
			s.mu.Unlock()
			s.record()
			c.Close()
			<-pumpDone
		}
		c.Close() // reaped already; releases the connection's resources
		ex := s.exitOf(r)
		if purpose == "" && s.exitedByChoice(r, ex) {
			bo.Reset()
			s.idleExit(r, ex)
			if !s.waitCall(ctx) {
				return
			}
			continue
		}
		d := time.Duration(0)
		failedNow := false
		if purpose != "" {
			bo.Reset()
		} else {
			if time.Duration(ex.UptimeMS)*time.Millisecond >= s.o.StableAfter || s.provedHealthy(r, ex) {
				bo.Reset()
			}
			d = bo.Fail()
			failedNow = bo.Failures() >= s.o.MaxFailures
		}
		s.connDied(r, ex, failedNow, purpose)
		if ctx.Err() != nil {
			return
		}
		if d > 0 {
			if !bo.Wait(ctx, d, s.restartCh) && ctx.Err() == nil {
				bo.Reset()
				s.restartFresh()
			}
		}
	}
}

// provedHealthy reports whether run r, which ended
// as ex says, proved its server healthy, so that its end, however soon,
// is no quick failure: it completed its handshake and answered a call of
// the client's, or it was killed from outside (SIGKILL, SIGTERM: a user,
// the OOM killer) while none of the client's calls was running on it. A
// run that never completed its handshake, or died under a call without
// answering any, still counts: that is how a crash loop looks, whatever
// the signal. Called before connDied settles r's calls.
func (s *Shim) provedHealthy(r *run, ex upstream.Exit) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.upSince.IsZero() || s.run != r {
		return false
	}
	if r.answered > 0 {
		return true
	}
	return externalSignal(ex) && len(s.callsOn(r)) == 0
}

// externalSignal reports whether ex is a death by a signal that ends a
// process from outside, not one that the connection's own side sent.
// Windows has no such signal: a TerminateProcess from outside (taskkill /F,
// Task Manager) is an exit code the server could have chosen itself.
func externalSignal(ex upstream.Exit) bool {
	if ex.Killed {
		return false
	}
	switch ex.Signal {
	case syscall.SIGKILL.String(), syscall.SIGTERM.String(), syscall.SIGINT.String(), syscall.SIGHUP.String():
		return true
	}
	return false
}

// install makes a run of c, just dialled, the current one.
func (s *Shim) install(c upstream.Conn) *run {
	s.mu.Lock()
	r := s.newRun(c, s.clk.Now())
	s.dialFails = 0
	s.cantStart = false
	s.permanent = false
	switch {
	case s.isFailed():
		// Still failed until this one answers.
	case r.first() || s.phase == state.Idle:
		s.setPhase(state.Starting) // a first start, or one on demand (idle.go)
	default:
		s.setPhase(state.Restarting)
	}
	s.mu.Unlock()
	s.event("spawn", "pid", c.PID(), "generation", r.gen)
	s.record()
	return r
}

// goUp marks the connection ready and releases the queue, in arrival order
// (re-sent requests first), holding sendMu so that new client messages come
// after it.
func (s *Shim) goUp(r *run) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	if s.run != r || r.down {
		s.mu.Unlock()
		return
	}
	c := r.conn
	recovered := s.isFailed()
	if !s.setPhase(state.Running) {
		s.mu.Unlock() // stopping
		return
	}
	q := s.queue
	s.queue = nil
	now := s.clk.Now()
	r.upSince = now
	for _, it := range q {
		if it.e != nil {
			it.e.run, it.e.sentAt = r, now
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
				s.sendFailed(it.e, r)
			}
		}
	}
}

// kill ends run r at once for cause (a state.Cause* the shim decides:
// hang, replay failure), detail its words: a child process is SIGKILLed;
// another upstream is closed in the background (Close may wait for its
// streams), and Run waits for that before it returns.
func (s *Shim) kill(r *run, cause, detail string) {
	c := r.conn
	reason := health.KillReason(cause, detail)
	s.event("kill", "pid", c.PID(), "reason", reason)
	s.mu.Lock()
	r.killCause, r.killWhy = cause, detail
	s.mu.Unlock()
	if k, ok := c.(killer); ok {
		k.Kill(reason)
		return
	}
	s.closers.Go(func() { c.Close() })
}

// exitOf is how run r ended, with the cause kill gave when the shim
// ended it: the SIGKILL or the closed session is how, the hang is why,
// and the client must read the why.
func (s *Shim) exitOf(r *run) upstream.Exit {
	c := r.conn
	ex := c.Exit()
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.killing() {
		if _, ok := c.(killer); !ok {
			// A child's Kill put the reason in Exit itself.
			ex.Reason = health.KillReason(r.killCause, r.killWhy) + " (" + ex.Reason + ")"
		}
		ex.Cause, ex.Detail = r.killCause, r.killWhy
	}
	return ex
}

// dialFailed records a failed start.
func (s *Shim) dialFailed(err error, failures int) {
	why, cant := s.startFailure(err)
	s.mu.Lock()
	s.dialFails++
	s.lastErr = oneLine(err.Error())
	if s.cantStart = cant; cant {
		s.lastErr = why
	}
	s.permanent = isPermanent(err)
	// A remote that refuses connections is down, not crash-looping: its
	// calls wait in the queue for QueueTimeout, so it is marked failed
	// (and hooks deny calls to it) only once an outage has lasted that
	// long. A stdio command that will not start is failed after
	// MaxFailures quick tries.
	switch {
	case cant || s.permanent || failures >= s.o.MaxFailures && (s.mode != state.ModeRemote || s.clk.Now().Sub(s.downSince) >= s.o.QueueTimeout):
		s.setPhase(state.Failed)
	case !s.isFailed():
		s.setPhase(state.Backoff)
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

// restartFresh leaves the failed state after a restart on purpose cut a
// backoff short: the next start is a fresh one, and calls wait for it.
func (s *Shim) restartFresh() {
	s.mu.Lock()
	if s.isFailed() {
		s.setPhase(state.Restarting)
	}
	s.mu.Unlock()
}
