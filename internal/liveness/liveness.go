// Package liveness holds the shim's rules for telling a hung server from a
// busy one, apart from the mechanism that applies them: a Detector has no
// clock, goroutines or I/O. The shim feeds it what it sees (messages, CPU
// time, cancellations, probe answers, stopped processes) with the time it
// saw them, and asks it what is due; the table tests run in microseconds.
//
// The rule is that the shim acts on facts about the server's own process
// and on the user's instructions, never on silence (docs/shim.md,
// "Hangs"). A server is killed only when
//   - the server itself (the shim checks which process that is) stays
//     stopped by a signal (SIGSTOP) at two checks in a row while a call is
//     outstanding;
//   - or a limit the user set runs out: a call outstanding for Deadline
//     (--hang-after) with no sign of life and a ping unanswered for
//     PingTimeout; an idle health probe (--ping-interval) unanswered for
//     PingTimeout; with KillOnCancel (--kill-on-cancel), a ping unanswered
//     for PingTimeout after the client cancelled a call.
//
// Otherwise the server is only "not answering" (Quiet: a call outstanding;
// CancelDeaf: since the client cancelled a call it left unanswered), which
// the shim publishes with the command that restarts it. Many servers
// cannot answer a ping while a tool runs (a single-threaded one, an event
// loop blocked by a synchronous call, one waiting on a slow fetch): their
// silence during a long call, or after the client gave up on it, is no
// sign of a hang; alone, the call finishes and the server keeps its state.
//
// Time the shim itself did not run (it was stopped with its job, a
// container froze, the machine slept) is no silence of the server's: a
// gap in the shim's ticks (Resumed) starts every clock of these rules
// again, under any setting.
//
// A sign of life is any message from the server (an answer, a progress
// notification, a request of its own) and a rise of the CPU time of its
// process tree of at least a tenth of the wall time between two readings
// (a tool computing; a background thread ticking now and then is not).
package liveness

import "time"

// Defaults.
const (
	// DefaultLook is how long a call may go with no sign of life before
	// the shim pings the server to see whether it still reads: the answer
	// decides nothing by itself, it only tells busy from deaf.
	DefaultLook = 3 * time.Second
	// DefaultPingTimeout is how long a ping may go unanswered before the
	// server counts as deaf.
	DefaultPingTimeout = 10 * time.Second
)

// Config is the Detector's settings.
type Config struct {
	// Look: a call outstanding this long with no sign of life starts a
	// ping (0: DefaultLook; at most Deadline when one is set).
	Look time.Duration
	// PingTimeout: a ping unanswered this long (nothing heard since it
	// went out) is deafness (0: DefaultPingTimeout).
	PingTimeout time.Duration
	// Deadline is the user's limit (--hang-after): a call outstanding this
	// long with no sign of life, and deaf to a ping, is killed. 0: none.
	Deadline time.Duration
	// Idle is the user's idle health check (--ping-interval): an idle
	// server is pinged this often and killed when deaf. 0: none.
	Idle time.Duration
	// KillOnCancel is the user's consent (--kill-on-cancel) to kill a
	// server that stays deaf to a ping for PingTimeout after the client
	// cancelled a call. Without it such a server is only not answering
	// (CancelDeaf): nothing tells one waiting on I/O from a hung one.
	KillOnCancel bool
}

// Kind is what the Detector says to do.
type Kind int8

const (
	None  Kind = iota
	Probe      // send one ping (the shim reports Answered or Unanswered)
	Kill       // kill the server: proof of a hang (Action.Why)
)

// Why a probe goes out or a server is killed.
type Why int8

const (
	ForCall     Why = iota + 1 // a call outstanding with no sign of life
	ForCancel                  // the client cancelled a call
	ForDeadline                // the user's --hang-after ran out
	ForIdle                    // the user's idle health check
)

// Action is the Detector's answer to Due.
type Action struct {
	Kind Kind
	Why  Why
	// Silent is how long nothing was heard (a Probe for a call, a Kill),
	// Deaf how long the ping has gone unanswered (a Kill).
	Silent, Deaf time.Duration
}

// Detector decides. It is not safe for concurrent use: the shim calls it
// with its lock held. The zero time means "never".
type Detector struct {
	cfg      Config
	heard    time.Time // the last sign of life
	probeOut bool      // a ping is out and neither answered nor timed out
	probeAt  time.Time // when the last ping went out
	deafAt   time.Time // when the oldest ping unanswered with nothing heard since went out
	deafWhy  Why       // why that ping went out
	cancelAt time.Time // a call cancelled with nothing heard since (the rules' clock)
	// cancelled is when the client cancelled that call, as said to the
	// user: a gap in the shim's ticks (Resumed) restarts cancelAt, not it.
	cancelled time.Time
	stopped   bool // the last check saw a stopped process during a call
	cpu       time.Duration
	cpuAt     time.Time
	// noPings: the server left a ping unanswered and answered a request
	// sent after it. It does not implement ping (the spec says it must),
	// so a ping proves nothing either way: none goes out any more. Kept
	// across Up: the next process runs the same program.
	noPings bool
}

// New returns a Detector; now is when the server came up.
func New(cfg Config, now time.Time) *Detector {
	if cfg.Look <= 0 {
		cfg.Look = DefaultLook
	}
	if cfg.Deadline > 0 {
		cfg.Look = min(cfg.Look, cfg.Deadline)
	}
	if cfg.PingTimeout <= 0 {
		cfg.PingTimeout = DefaultPingTimeout
	}
	return &Detector{cfg: cfg, heard: now}
}

// Config returns the settings in effect (defaults filled in).
func (d *Detector) Config() Config { return d.cfg }

// Up starts over for a new server (process or session) that came up at now.
func (d *Detector) Up(now time.Time) { *d = Detector{cfg: d.cfg, heard: now, noPings: d.noPings} }

// Heard records a sign of life: any message from the server.
func (d *Detector) Heard(now time.Time) {
	d.heard = now
	d.deafAt, d.deafWhy, d.cancelAt, d.cancelled = time.Time{}, 0, time.Time{}, time.Time{}
}

// Resumed records a gap in the shim's own ticks ending at now: the shim
// was stopped (SIGSTOP, Ctrl-Z of its job, a frozen container, a
// debugger) or the machine slept. Whatever the server did meanwhile, the
// shim saw none of it, so the gap is no silence: every clock of the rules
// starts again at now (the last sign of life, a ping's time-out, a
// cancel's, a stop seen once). A ping out before the gap
// proves nothing when it times out: it was timed across the gap.
func (d *Detector) Resumed(now time.Time) {
	d.heard = now
	d.deafAt, d.deafWhy = time.Time{}, 0
	if !d.probeAt.IsZero() {
		d.probeAt = now
	}
	if !d.cancelAt.IsZero() {
		d.cancelAt = now
	}
	d.stopped = false
}

// CPU records a reading of the CPU time of the server's process tree. A
// rise of at least a tenth of the wall time since the last reading is a
// sign of life; the first reading only sets the base.
func (d *Detector) CPU(now time.Time, total time.Duration) {
	if !d.cpuAt.IsZero() && total > d.cpu && (total-d.cpu)*10 >= now.Sub(d.cpuAt) {
		d.Heard(now)
	}
	d.cpu, d.cpuAt = total, now
}

// Cancelled records that the client cancelled a call outstanding on the
// server: from now a ping it stays deaf to makes it not answering since
// the cancel (CancelDeaf), and, with KillOnCancel, gets it killed.
func (d *Detector) Cancelled(now time.Time) {
	if d.cancelAt.IsZero() {
		d.cancelAt, d.cancelled = now, now
	}
}

// AnsweredRequest records the answer to a request of the client's sent at
// sent: a sign of life, and, when a ping sent before it timed out
// unanswered, proof that the server does not answer pings at all.
func (d *Detector) AnsweredRequest(now, sent time.Time) {
	if !d.probeOut && !d.deafAt.IsZero() && d.deafAt.Before(sent) {
		d.noPings = true
	}
	d.Heard(now)
}

// IgnoresPings reports whether the server was seen not to answer pings.
func (d *Detector) IgnoresPings() bool { return d.noPings }

// Answered records the answer to the ping out: a sign of life.
func (d *Detector) Answered(now time.Time) {
	d.probeOut = false
	d.Heard(now)
}

// Unanswered records that the ping out timed out (or could not be sent):
// the server stays deaf since it went out, and another may go out.
func (d *Detector) Unanswered() { d.probeOut = false }

// Probing reports whether a ping is out.
func (d *Detector) Probing() bool { return d.probeOut }

// Due says what to do at now. call is when the oldest call counted as
// waiting for the server was sent (zero: none; see the shim's isCall).
// A Probe returned is taken as sent.
func (d *Detector) Due(now, call time.Time) Action {
	silent := now.Sub(d.heard)
	if !call.IsZero() {
		silent = min(silent, now.Sub(call))
	}
	if !d.deafAt.IsZero() {
		deaf := now.Sub(d.deafAt)
		switch {
		case d.cfg.KillOnCancel && d.cancelDeaf(now):
			return Action{Kind: Kill, Why: ForCancel, Silent: silent, Deaf: deaf}
		case d.cfg.Deadline > 0 && !call.IsZero() && silent >= d.cfg.Deadline && deaf >= d.cfg.PingTimeout && !d.noPings:
			return Action{Kind: Kill, Why: ForDeadline, Silent: silent, Deaf: deaf}
		case d.cfg.Idle > 0 && d.deafWhy == ForIdle && deaf >= d.cfg.PingTimeout:
			return Action{Kind: Kill, Why: ForIdle, Silent: silent, Deaf: deaf}
		}
	}
	if d.noPings {
		// No proof but the user's deadline: silence for it.
		if d.cfg.Deadline > 0 && !call.IsZero() && silent >= d.cfg.Deadline {
			return Action{Kind: Kill, Why: ForDeadline, Silent: silent}
		}
		return Action{}
	}
	// A ping already unanswered tells all another would: none goes out
	// until something is heard.
	if d.probeOut || !d.deafAt.IsZero() {
		return Action{}
	}
	switch {
	case !d.cancelAt.IsZero():
		return d.probe(now, ForCancel, silent)
	case !call.IsZero() && silent >= d.cfg.Look && now.Sub(d.probeAt) >= d.cfg.Look:
		why := ForCall
		if d.cfg.Deadline > 0 {
			why = ForDeadline
		}
		return d.probe(now, why, silent)
	case call.IsZero() && d.cfg.Idle > 0 && silent >= d.cfg.Idle && now.Sub(d.probeAt) >= d.cfg.Idle:
		return d.probe(now, ForIdle, silent)
	}
	return Action{}
}

func (d *Detector) probe(now time.Time, why Why, silent time.Duration) Action {
	d.probeOut, d.probeAt = true, now
	d.deafAt, d.deafWhy = now, why
	return Action{Kind: Probe, Why: why, Silent: silent}
}

// Quiet reports whether the server is not answering: a call is
// outstanding (call: when the oldest was sent), a ping has gone unanswered
// for PingTimeout (a server that ignores pings: Look+PingTimeout of
// silence), and nothing else was heard. since is when the silence began:
// the last sign of life, or the call when it came later.
func (d *Detector) Quiet(now, call time.Time) (since time.Time, ok bool) {
	if call.IsZero() {
		return time.Time{}, false
	}
	since = later(d.heard, call)
	if d.noPings {
		return since, now.Sub(since) >= d.cfg.Look+d.cfg.PingTimeout
	}
	if d.deafAt.IsZero() || now.Sub(d.deafAt) < d.cfg.PingTimeout {
		return time.Time{}, false
	}
	return since, true
}

// cancelDeaf reports whether the client cancelled a call and the server
// has been deaf to a ping for PingTimeout since (since the later of the
// ping and the cancel), with nothing heard.
func (d *Detector) cancelDeaf(now time.Time) bool {
	return !d.cancelAt.IsZero() && !d.deafAt.IsZero() && now.Sub(later(d.deafAt, d.cancelAt)) >= d.cfg.PingTimeout
}

// CancelDeaf reports whether the server is not answering since the client
// cancelled a call (at: when): it left the call unanswered, and has since
// been deaf to a ping for PingTimeout (a server that ignores pings: silent
// for Look+PingTimeout), with nothing heard. It is left running unless the
// user set KillOnCancel: a single-threaded server waiting on I/O is deaf
// just the same, and finishes the call alone.
func (d *Detector) CancelDeaf(now time.Time) (at time.Time, ok bool) {
	if d.cancelAt.IsZero() {
		return time.Time{}, false
	}
	if d.noPings {
		return d.cancelled, now.Sub(later(d.heard, d.cancelAt)) >= d.cfg.Look+d.cfg.PingTimeout
	}
	return d.cancelled, d.cancelDeaf(now)
}

// Stopped records one check of the server's tree while a call is
// outstanding (seen: a process was stopped) and reports whether to kill:
// seen at two checks in a row. A stop seen once may be a moment's (job
// control, a profiler).
func (d *Detector) Stopped(seen bool) bool {
	if !seen {
		d.stopped = false
		return false
	}
	if d.stopped {
		return true
	}
	d.stopped = true
	return false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
