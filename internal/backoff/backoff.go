// Package backoff computes jittered, capped, resettable delays between
// attempts (respawns of a crashing server, redials of a remote one).
//
// The shape follows tailscale's util/backoff: the delay grows with the number
// of consecutive failures, is capped, is jittered so that many shims started
// together do not retry in lockstep, and resets after a success. The clock
// and the random source are injectable so tests need no sleeps.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/clock"
)

// Backoff is not safe for concurrent use; its owner (the shim's supervisor)
// is the only caller.
type Backoff struct {
	// Min is the delay after the second consecutive failure (the first
	// failure retries at once: a server that crashed once is respawned
	// immediately).
	Min time.Duration
	// Max caps every delay; a crash-looping server is retried at this
	// interval forever.
	Max time.Duration
	// Rand returns a number in [0,1); nil uses math/rand/v2.
	Rand func() float64
	// Clock times the waits; nil is the wall clock. Tests inject a
	// clock.Fake.
	Clock clock.Clock

	n int
}

// Failures is the number of consecutive failures recorded since the last
// Reset.
func (b *Backoff) Failures() int { return b.n }

// Fail records one more failure and returns how long to wait before the
// next attempt: 0 for the first, then Min doubling per failure, capped at
// Max, with jitter of up to -25%.
func (b *Backoff) Fail() time.Duration {
	b.n++
	if b.n <= 1 {
		return 0
	}
	d := b.Min
	for i := 2; i < b.n && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	r := b.Rand
	if r == nil {
		r = rand.Float64
	}
	// Jitter downwards only, so Max stays a true cap.
	return d - time.Duration(float64(d)*0.25*r())
}

// Reset forgets the failures: the next Fail returns 0 again.
func (b *Backoff) Reset() { b.n = 0 }

// Wait sleeps for d on b's clock or until ctx is done or wake fires,
// whichever comes first; it reports whether the full delay elapsed.
func (b *Backoff) Wait(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	return Sleep(ctx, b.Clock, d, wake)
}

// Sleep is Wait without a Backoff: for a delay the caller already knows
// (a server's SSE retry: field). c nil is the wall clock; wake may be nil.
func Sleep(ctx context.Context, c clock.Clock, d time.Duration, wake <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := clock.Or(c).NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	case <-wake:
		return false
	}
}
