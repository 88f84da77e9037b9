package testenv

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// StartPiped starts cmd with pipes to its stdin and from its stdout, the
// way a client talks to a stdio server, and fails tb if it cannot.
func StartPiped(tb testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err == nil {
		stdout, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		tb.Fatalf("start %s: %v", cmd.Path, err)
	}
	return stdin, stdout
}

// RunCode runs cmd to its end with its stdout and stderr captured, and
// returns its exit status with them. It fails tb only when cmd could not
// run; a non-zero exit is the caller's to judge.
func RunCode(tb testing.TB, cmd *exec.Cmd) (code int, stdout, stderr string) {
	tb.Helper()
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), o.String(), e.String()
	} else if err != nil {
		tb.Fatal(err)
	}
	return 0, o.String(), e.String()
}

// StartWait starts cmd and returns the channel its Wait's error arrives
// on once it ends, for a test that waits for it with a deadline. It fails
// tb when cmd cannot start.
func StartWait(tb testing.TB, cmd *exec.Cmd) <-chan error {
	tb.Helper()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}

// Golden compares got with the golden file at path, after writing got
// there when update is set (go test -update). A difference fails tb,
// naming what changed, with got in full.
func Golden(tb testing.TB, path, got string, update bool, what string) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (go test -update writes it)", err)
	}
	if string(want) != got {
		tb.Errorf("%s changed; if on purpose, go test -update, and read the diff of %s\n%s", what, path, got)
	}
}
