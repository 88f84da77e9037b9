package backoff

import (
	"context"
	"testing"
	"time"
)

func TestFail(t *testing.T) {
	tests := []struct {
		name string
		rand float64
		want []time.Duration
	}{
		{"no jitter", 0, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}},
		{"full jitter", 0.999999999, []time.Duration{0, 75 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond, 750 * time.Millisecond, 750 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Backoff{Min: 100 * time.Millisecond, Max: time.Second, Rand: func() float64 { return tt.rand }}
			for i, want := range tt.want {
				got := b.Fail().Round(time.Millisecond)
				if got != want {
					t.Errorf("failure %d: got %v, want %v", i+1, got, want)
				}
			}
			if got := b.Failures(); got != len(tt.want) {
				t.Errorf("Failures: got %d, want %d", got, len(tt.want))
			}
			b.Reset()
			if got := b.Fail(); got != 0 {
				t.Errorf("after Reset: got %v, want 0", got)
			}
		})
	}
}

func TestWait(t *testing.T) {
	fired := make(chan time.Time, 1)
	var asked time.Duration
	b := &Backoff{After: func(d time.Duration) <-chan time.Time { asked = d; return fired }}
	fired <- time.Now()
	if !b.Wait(context.Background(), 5*time.Second, nil) {
		t.Fatal("Wait returned false when the timer fired")
	}
	if asked != 5*time.Second {
		t.Errorf("asked for %v, want 5s", asked)
	}
	wake := make(chan struct{})
	close(wake)
	if b.Wait(context.Background(), time.Hour, wake) {
		t.Error("Wait returned true when woken")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b.Wait(ctx, time.Hour, nil) {
		t.Error("Wait returned true after cancel")
	}
	if !b.Wait(ctx, 0, nil) {
		t.Error("Wait(0) returned false")
	}
}
