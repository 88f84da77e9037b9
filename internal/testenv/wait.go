package testenv

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails tb (naming what it waited
// for) when it still does not after within: the one way the tests wait for
// an event, with a deadline instead of a sleep that hopes it happened.
func WaitFor(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Quantile is the q-quantile (0 to 1) of d, nearest rank below: d sorted,
// element q*(len-1). d is left as it is.
func Quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// Median is the middle of d (of an even count, the upper of the two): the
// benchmarks' and the cost reports' figure, which one slow run on a loaded
// machine does not move. d is left as it is.
func Median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

var (
	goEnvOnce sync.Once
	goEnvMap  map[string]string
)

// GoEnv is "KEY=value" for each of keys that the go command has a value
// for (this process's environment first, then `go env`): what a child
// given a fresh HOME needs to build and run Go with this machine's caches
// and proxy instead of downloading everything again.
func GoEnv(keys ...string) []string {
	goEnvOnce.Do(func() {
		goEnvMap = map[string]string{}
		if out, err := exec.Command("go", "env", "-json").Output(); err == nil {
			json.Unmarshal(out, &goEnvMap)
		}
	})
	var env []string
	for _, k := range keys {
		v := os.Getenv(k)
		if v == "" {
			v = goEnvMap[k]
		}
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// CloseAndWait ends a child that serves on its stdin the way its client
// would (closing stdin, EOF being how an MCP stdio session ends), waits up
// to within for it to exit and kills it after that. It reports whether the
// child exited by itself.
func CloseAndWait(cmd *exec.Cmd, stdin io.Closer, within time.Duration) bool {
	stdin.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(within):
		cmd.Process.Kill()
		<-done
		return false
	}
}
