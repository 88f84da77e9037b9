//go:build unix

package shim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestChaos streams calls for 30 s (5 s under -short) while the server is SIGKILLed at random
// every 1-3 s: every request gets exactly one response, none hangs, and no
// non-idempotent call is ever executed twice.
func TestChaos(t *testing.T) {
	const workers = 4
	duration, minKills := 30*time.Second, 8
	if testing.Short() {
		// The fast suite gets a few kills; the full suite the long run.
		duration, minKills = 5*time.Second, 1
		t.Logf("-short: %v of chaos (the full suite runs 30s)", duration)
	}
	h := newHarness(t, hopt{opts: func(o *Options) { o.StableAfter = 500 * time.Millisecond }})
	h.handshake()

	var kills int
	stopKiller := killAtRandom(time.Second, 2*time.Second, func() {
		if pid := h.childPID(); pid != 0 && syscall.Kill(pid, syscall.SIGKILL) == nil {
			kills++
		}
	})

	type outcome struct {
		tool, key, result string
		latency           time.Duration
	}
	var mu sync.Mutex
	var outcomes []outcome
	var wg sync.WaitGroup
	deadline := time.Now().Add(duration)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				key := fmt.Sprintf("w%d-%d", w, i)
				tool, args := "echo", `{"text":"`+key+`","key":"`+key+`"}`
				switch n := rand.IntN(10); {
				case n < 3:
					tool = "write"
					args = `{"key":"` + key + `"}`
				case n < 5:
					tool = "add"
					args = `{"a":1,"b":2,"key":"` + key + `"}`
				case n < 6:
					tool = "slow"
					args = `{"ms":50,"key":"` + key + `"}`
				}
				start := time.Now()
				_, ch := h.start("tools/call", `{"name":"`+tool+`","arguments":`+args+`}`)
				var res string
				select {
				case b := <-ch:
					res = string(b)
				case <-time.After(20 * time.Second):
					res = "TIMEOUT"
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{tool, key, res, time.Since(start)})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	stopKiller()

	executed := executedCalls(h.events())
	var ok, failed, timeouts, unsafe int
	var lat []time.Duration
	for _, o := range outcomes {
		lat = append(lat, o.latency)
		n := executed[o.tool+" "+o.key]
		if o.tool == "write" && n > 1 {
			unsafe++
		}
		switch judgeCall(t, o.tool, o.key, o.result, n) {
		case "ok":
			ok++
		case "failed":
			failed++
			if o.tool != "write" && !strings.Contains(o.result, "retries-exhausted") {
				t.Errorf("%s %s (safe to retry) failed: %s", o.tool, o.key, o.result)
			}
		default:
			timeouts++
			t.Errorf("%s %s: no response within 20s", o.tool, o.key)
		}
	}
	h.mu.Lock()
	dups := len(h.dups)
	h.mu.Unlock()
	if dups > 0 {
		t.Errorf("%d duplicate responses", dups)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))].Round(time.Millisecond) }
	t.Logf("chaos: %d calls, %d kills: %d ok, %d errors (non-idempotent calls cut short), %d timeouts, %d unsafe retries; latency p50 %v p99 %v max %v",
		len(outcomes), kills, ok, failed, timeouts, unsafe, p(0.5), p(0.99), p(1))
	if kills < minKills {
		t.Errorf("only %d kills in %v", kills, duration)
	}
}

// killAtRandom calls kill after every wait of least plus up to spread
// more, until the stop it returns, which waits for the last kill to end.
func killAtRandom(least, spread time.Duration, kill func()) (stop func()) {
	done := make(chan struct{})
	var killer sync.WaitGroup
	killer.Add(1)
	go func() {
		defer killer.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(least + rand.N(spread)):
			}
			kill()
		}
	}()
	return func() { close(done); killer.Wait() }
}

// executedCalls counts the calls the example server logged ("call TOOL
// KEY" event lines), by "TOOL KEY".
func executedCalls(events []string) map[string]int {
	executed := map[string]int{}
	for _, e := range events {
		if f := strings.Fields(e); len(f) == 3 && f[0] == "call" {
			executed[f[1]+" "+f[2]]++
		}
	}
	return executed
}

// judgeCall holds a chaos call of tool (key) that the server ran n times
// to the rules of both chaos tests (a write never runs twice: no unsafe
// retry; an answered write ran once; an error is the shim's -32603) and
// says what res is: "ok" (an answer), "failed" (an error), or "" for the
// test's own marks (TIMEOUT, LOST, DUPLICATE…), which the caller judges.
func judgeCall(t *testing.T, tool, key, res string, n int) string {
	t.Helper()
	if tool == "write" && n > 1 {
		t.Errorf("write %s ran %d times: unsafe retry", key, n)
	}
	switch {
	case res == "TIMEOUT" || res == "LOST" || strings.HasPrefix(res, "DUPLICATE"):
		return ""
	case strings.Contains(res, `"result"`):
		if tool == "write" && n != 1 {
			t.Errorf("write %s answered but ran %d times", key, n)
		}
		return "ok"
	}
	if !strings.Contains(res, `"code":-32603`) {
		t.Errorf("%s %s: unexpected error %s", tool, key, res)
	}
	return "failed"
}
