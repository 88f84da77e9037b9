package testenv

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMedianQuantile(t *testing.T) {
	d := []time.Duration{5, 1, 4, 2, 3, 6}
	in := slices.Clone(d)
	if m := Median(d); m != 4 {
		t.Errorf("median of 1..6: got %v, want 4 (the upper middle)", m)
	}
	if m := Median(d[:5]); m != 3 {
		t.Errorf("median of 5 1 4 2 3: got %v, want 3", m)
	}
	for q, want := range map[float64]time.Duration{0: 1, 0.25: 2, 1: 6} {
		if got := Quantile(d, q); got != want {
			t.Errorf("quantile %v: got %v, want %v", q, got, want)
		}
	}
	if !slices.Equal(d, in) {
		t.Errorf("the input was reordered: %v", d)
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, 10*time.Second, "the third look", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("cond called %d times, want 3", n)
	}
}

func TestGoEnv(t *testing.T) {
	if UnderWine() {
		t.Skip("asks the go command, which the Wine prefix lacks (the Linux run checks it)")
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	env := GoEnv("GOROOT", "GOFLAGS", "NOT_A_GO_VARIABLE")
	if len(env) != 2 || !strings.HasPrefix(env[0], "GOROOT=") || len(env[0]) == len("GOROOT=") || env[1] != "GOFLAGS=-mod=mod" {
		t.Errorf("got %q, want GOROOT=<dir>, GOFLAGS=-mod=mod and nothing for an unknown key", env)
	}
}
