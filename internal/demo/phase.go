package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
)

// One phase of the script: a burst of calls, the failure injected mid-burst,
// and what the client saw.

// call is one request of a burst and its outcome.
type call struct {
	sent, done time.Time
	tool       string
	ok, lost   bool
	errText    string
}

// workload returns call i of phase p: a mix of safe reads, an idempotent
// write and a non-idempotent increment, each held in the server for a
// while so that some are in flight when the failure hits. The tag lets the
// call log show whether one request ran twice.
func workload(p, i int) (string, map[string]any) {
	tag := fmt.Sprintf("p%d-c%d", p, i)
	switch i % 6 {
	case 0:
		return example.ToolEcho, map[string]any{"text": tag, "delay_ms": 150}
	case 1:
		return example.ToolAdd, map[string]any{"a": i, "b": p, "delay_ms": 100}
	case 2:
		return example.ToolSlow, map[string]any{"ms": 200}
	case 3:
		return example.ToolSetValue, map[string]any{"key": tag, "value": "v", "delay_ms": 100}
	case 4:
		return example.ToolCounterIncrement, map[string]any{"tag": tag, "delay_ms": 150}
	default:
		return example.ToolEcho, map[string]any{"text": tag, "delay_ms": 50}
	}
}

func runPhase(ctx context.Context, o Options, t *target, p int, f failure, failFile string) Stats {
	var st Stats
	retriedBefore := 0
	if r := t.record(); r != nil {
		retriedBefore = r.Retried
	}
	st.OldPID = t.serverPID()
	calls := make([]call, o.Calls)
	next := make(chan int)
	sentInject := make(chan struct{})
	// Strike while a non-idempotent counter_increment is in the server, a
	// third of the way in: the shim must not re-send that one.
	injectAt := o.Calls / 3
	for injectAt%6 != 4 && injectAt < o.Calls-1 {
		injectAt++
	}
	var wg sync.WaitGroup
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name, args := workload(p, i)
				cctx, cancel := context.WithTimeout(ctx, o.CallTimeout)
				calls[i].sent = time.Now()
				if i == injectAt {
					close(sentInject)
				}
				r, err := t.client.CallTool(cctx, name, args)
				cancel()
				c := &calls[i]
				c.done = time.Now()
				c.tool = name
				switch {
				case errors.Is(err, context.DeadlineExceeded):
					c.lost = true
				case err != nil:
					c.errText = err.Error()
				case r.Error != nil:
					c.errText = fmt.Sprintf("%d %s", r.Error.Code, r.Error.Message)
				default:
					c.ok = true
				}
				// A steady stream, not a flood: the failure should land
				// among calls that are in flight and calls still to come.
				time.Sleep(25 * time.Millisecond)
			}
		}()
	}
	var injected time.Time
	injectDone := make(chan struct{})
	go func() {
		defer close(injectDone)
		<-sentInject
		time.Sleep(60 * time.Millisecond) // let it reach the server
		injected = time.Now()
		if st.OldPID > 0 && t.isServer(st.OldPID) {
			f.inject(st.OldPID, failFile)
		}
	}()
	for i := 0; i < o.Calls; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	<-injectDone

	st.RecoveryMS = -1
	first := time.Time{}
	for _, c := range calls {
		switch {
		case c.ok:
			st.OK++
			if c.sent.After(injected) && (first.IsZero() || c.done.Before(first)) {
				first = c.done
			}
		case c.lost:
			st.Lost++
		default:
			st.Failed++
			if st.Errors == nil {
				st.Errors = map[string]int{}
			}
			st.Errors[c.tool+": "+shorten(c.errText)]++
		}
	}
	if first.IsZero() {
		first = probeRecovery(ctx, t, 15*time.Second)
	}
	if !first.IsZero() {
		st.RecoveryMS = first.Sub(injected).Milliseconds()
	}
	if r := t.record(); r != nil {
		st.Retried = r.Retried - retriedBefore
	}
	if st.RecoveryMS >= 0 {
		st.NewPID = t.waitNewServer(ctx, st.OldPID, 2*time.Second)
	}
	return st
}

// probeRecovery sends an echo every 100 ms until one succeeds (the time it
// was answered) or timeout passes or the connection is gone (zero time).
// It measures recovery when every call of the burst had already failed.
func probeRecovery(ctx context.Context, t *target, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, time.Until(deadline))
		r, err := t.client.CallTool(cctx, example.ToolEcho, map[string]any{"text": "probe"})
		cancel()
		if errors.Is(err, example.ErrClosed) {
			return time.Time{}
		}
		if err == nil && r.Error == nil {
			return time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}
}

// sessionReplayed asks the (new) server whether it has the client's log
// level and subscription.
func sessionReplayed(ctx context.Context, t *target) bool {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := t.client.CallTool(cctx, example.ToolSessionInfo, nil)
	if err != nil || r.Error != nil {
		return false
	}
	txt := r.Text()
	return strings.Contains(txt, `"logLevel":"info"`) && strings.Contains(txt, `example://counter`)
}

// ranTwice counts tags of phase p that appear more than once among the
// counter_increment lines of the call log.
func ranTwice(callLog string, p int) int {
	b, _ := os.ReadFile(callLog)
	seen := map[string]int{}
	prefix := fmt.Sprintf(`"tag":"p%d-`, p)
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, example.ToolCounterIncrement+" ") || !strings.Contains(l, prefix) {
			continue
		}
		seen[l]++
	}
	n := 0
	for _, c := range seen {
		if c > 1 {
			n++
		}
	}
	return n
}

// shorten keeps the first clause of an error message, for counting.
func shorten(s string) string {
	if i := strings.Index(s, ";"); i > 0 {
		s = s[:i]
	}
	// The shim names the server first; the demo has only one.
	if i := strings.Index(s, `": `); i > 0 && strings.Contains(s[:i], `MCP server "`) {
		code, _, _ := strings.Cut(s, " ")
		s = code + " " + s[i+3:]
	}
	s = strings.TrimSpace(s)
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}
