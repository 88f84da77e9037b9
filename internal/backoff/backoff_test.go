package backoff

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/clock"
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
	clk := clock.NewFake()
	b := &Backoff{Clock: clk}
	done := make(chan bool)
	go func() { done <- b.Wait(context.Background(), 5*time.Second, nil) }()
	if _, ok := clk.WaitTimer(10*time.Second, func(d time.Duration) bool { return d == 5*time.Second }); !ok {
		t.Fatal("Wait set no 5s timer")
	}
	clk.Advance(5 * time.Second)
	if !<-done {
		t.Fatal("Wait returned false when the timer fired")
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

// Sleep is the bridge's wait for a server's retry delay: the wall clock
// when none is given, no wake channel, and ctx ends it.
func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), nil, time.Millisecond, nil) {
		t.Error("Sleep(1ms) returned false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, nil, time.Hour, nil) {
		t.Error("Sleep returned true after cancel")
	}
}
