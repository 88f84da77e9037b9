// Package clock is the time source of the supervisor and its backoff, so
// that tests drive time instead of sleeping through it (STYLE: core code
// takes a clock). Real is the wall clock; Fake is a clock that moves only
// when a test advances it.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer fires once after d; d <= 0 fires at once.
	NewTimer(d time.Duration) Timer
}

// Timer is the part of time.Timer the callers use.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Real is the wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Or returns c, or Real when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// Since is c.Now().Sub(t).
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Fake is a Clock for tests: its time moves only by Advance, which fires
// every timer that falls due. WaitTimer lets a test wait, without
// sleeping, until the code under test has set the timer it means to fire.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  map[*fakeTimer]bool // pending
	changed chan struct{}       // closed and replaced when a timer is set
}

// NewFake returns a Fake set to a fixed instant.
func NewFake() *Fake {
	return &Fake{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), timers: map[*fakeTimer]bool{}, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer due d after the fake now.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Advance moves the time on by d and fires the timers that fall due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	for t := range f.timers {
		if !t.when.After(f.now) {
			delete(f.timers, t)
			select {
			case t.c <- f.now:
			default:
			}
		}
	}
}

// Pending returns how long each pending timer was set for.
func (f *Fake) Pending() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Duration
	for t := range f.timers {
		out = append(out, t.d)
	}
	return out
}

// WaitTimer blocks until a pending timer set for a duration that match
// accepts exists, and returns that duration; it gives up (returning
// false) after timeout of real time, which only a broken test reaches.
func (f *Fake) WaitTimer(timeout time.Duration, match func(d time.Duration) bool) (time.Duration, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		for t := range f.timers {
			if match(t.d) {
				f.mu.Unlock()
				return t.d, true
			}
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return 0, false
		}
	}
}

type fakeTimer struct {
	f    *Fake
	c    chan time.Time
	d    time.Duration
	when time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.f.timers[t]
	delete(t.f.timers, t)
	drain(t.c)
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	was := f.timers[t]
	drain(t.c) // as time.Timer since Go 1.23: no stale value after Reset
	t.d, t.when = d, f.now.Add(d)
	if d <= 0 {
		delete(f.timers, t)
		select {
		case t.c <- f.now:
		default:
		}
		return was
	}
	f.timers[t] = true
	close(f.changed)
	f.changed = make(chan struct{})
	return was
}

func drain(c chan time.Time) {
	select {
	case <-c:
	default:
	}
}
