package clock

import (
	"testing"
	"time"
)

func TestFake(t *testing.T) {
	f := NewFake()
	start := f.Now()
	a, b := f.NewTimer(time.Second), f.NewTimer(3*time.Second)
	f.Advance(999 * time.Millisecond)
	select {
	case <-a.C():
		t.Fatal("fired early")
	default:
	}
	f.Advance(time.Millisecond)
	select {
	case at := <-a.C():
		if at.Sub(start) != time.Second {
			t.Errorf("fired at +%v", at.Sub(start))
		}
	default:
		t.Fatal("did not fire when due")
	}
	if !b.Stop() || b.Stop() {
		t.Error("Stop of a pending timer, then of a stopped one")
	}
	f.Advance(time.Hour)
	select {
	case <-b.C():
		t.Error("a stopped timer fired")
	default:
	}
	if len(f.Pending()) != 0 {
		t.Errorf("pending: %v", f.Pending())
	}
	go func() { f.NewTimer(7 * time.Second) }()
	if d, ok := f.WaitTimer(10*time.Second, func(d time.Duration) bool { return d > 5*time.Second }); !ok || d != 7*time.Second {
		t.Errorf("WaitTimer: %v %v", d, ok)
	}
	if _, ok := f.WaitTimer(time.Millisecond, func(d time.Duration) bool { return d == time.Minute }); ok {
		t.Error("WaitTimer found a timer nobody set")
	}
	z := f.NewTimer(0)
	select {
	case <-z.C():
	default:
		t.Error("a zero timer did not fire at once")
	}
}

func TestReal(t *testing.T) {
	if Or(nil) != Real {
		t.Fatal("Or(nil) is not Real")
	}
	tm := Real.NewTimer(time.Millisecond)
	<-tm.C()
	if Since(Real, Real.Now().Add(-time.Second)) < time.Second {
		t.Error("Since")
	}
}
