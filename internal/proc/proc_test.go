//go:build unix

package proc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

type lockedBuffer = testenv.LockedBuffer

func sh(script string, stderr *lockedBuffer) Config {
	c := Config{Path: "/bin/sh", Args: []string{"-c", script}, StopStep: 300 * time.Millisecond}
	if stderr != nil {
		c.Stderr = stderr
	}
	return c
}

func waitDone(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("child did not end")
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name, script string
		code         int
		signal       string
		reason       string
	}{
		{"exit code", "exit 3", 3, "", "exited with code 3"},
		{"clean", "exit 0", 0, "", "exited with code 0"},
		{"signal", "kill -9 $$", -1, "killed", "killed by signal 9 (killed)"},
		{"segv", "kill -SEGV $$", -1, "segmentation fault", "killed by signal 11 (segmentation fault)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(sh(tt.script, nil))
			if err != nil {
				t.Fatal(err)
			}
			waitDone(t, p)
			ex := p.Exit()
			if tt.code >= 0 && (ex.Code == nil || *ex.Code != tt.code) {
				t.Errorf("code: got %v, want %d", ex.Code, tt.code)
			}
			if ex.Signal != tt.signal || ex.Reason != tt.reason {
				t.Errorf("got signal %q reason %q, want %q %q", ex.Signal, ex.Reason, tt.signal, tt.reason)
			}
			p.Close()
		})
	}
}

// Lines pass as written (validation is the shim's job); empty lines are
// skipped.
func TestLines(t *testing.T) {
	stderr := &lockedBuffer{}
	p, err := Start(sh(`read x; echo "$x"; echo 'not json'; echo; echo '{"jsonrpc":"2.0","method":"a"}'; echo "token=abcdefgh oops" >&2; exit 0`, stderr))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range p.Recv() {
		got = append(got, string(m))
	}
	want := []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `not json`, `{"jsonrpc":"2.0","method":"a"}`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	ex := p.Exit()
	if len(ex.StderrTail) != 1 || ex.StderrTail[0] != "token [REDACTED] oops" && ex.StderrTail[0] != "token=[REDACTED] oops" {
		t.Errorf("stderr tail: %q", ex.StderrTail)
	}
	if !strings.Contains(stderr.String(), "token=abcdefgh oops") {
		t.Errorf("stderr passthrough: %q", stderr.String())
	}
	p.Close()
	p.Close() // twice is fine
}

func TestStopLadder(t *testing.T) {
	tests := []struct {
		name   string
		script string
		min    time.Duration
		signal string
	}{
		{"stdin close", "echo ready >&2; cat >/dev/null", 0, ""},
		// The shell waits in the wait builtin, which a trapped signal
		// interrupts at once (a foreground sleep would delay the trap
		// past the step on a loaded machine).
		{"SIGTERM", "trap 'exit 0' TERM; exec 0</dev/null; sleep 60 & echo ready >&2; wait", 300 * time.Millisecond, ""},
		{"SIGKILL", "trap '' TERM; exec 0</dev/null; echo ready >&2; while :; do sleep 0.05; done", 600 * time.Millisecond, "killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr lockedBuffer
			p, err := Start(sh(tt.script, &stderr))
			if err != nil {
				t.Fatal(err)
			}
			// Its trap is set before the ladder starts: a shell still
			// starting on a loaded machine would die of the default
			// action instead.
			testenv.WaitFor(t, 10*time.Second, "the script to be ready", func() bool { return strings.Contains(stderr.String(), "ready") })
			start := time.Now()
			p.Close()
			d := time.Since(start)
			if d < tt.min || d > tt.min+2*time.Second {
				t.Errorf("Close took %v, want about %v", d, tt.min)
			}
			if got := p.Exit().Signal; got != tt.signal {
				t.Errorf("signal: got %q, want %q", got, tt.signal)
			}
		})
	}
}

// A grandchild that outlives its parent (an npx wrapper killed with -9)
// is killed with the group, and the pipes it held do not keep Done open.
func TestGroupCleanup(t *testing.T) {
	pidfile := t.TempDir() + "/gc"
	p, err := Start(sh(`sleep 60 & echo $! > `+pidfile+`; wait`, nil))
	if err != nil {
		t.Fatal(err)
	}
	var gc int
	deadline := time.Now().Add(5 * time.Second)
	for gc == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidfile)
		fmt.Sscan(string(b), &gc)
		time.Sleep(5 * time.Millisecond)
	}
	if gc == 0 {
		t.Fatal("no grandchild")
	}
	syscall.Kill(p.PID(), syscall.SIGKILL)
	waitDone(t, p)
	deadline = time.Now().Add(5 * time.Second)
	for syscall.Kill(gc, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if syscall.Kill(gc, 0) == nil {
		t.Errorf("grandchild %d survived", gc)
	}
}

func TestKillReason(t *testing.T) {
	p, err := Start(sh("sleep 60", nil))
	if err != nil {
		t.Fatal(err)
	}
	p.Kill("hung: test")
	waitDone(t, p)
	if got := p.Exit().Reason; got != "hung: test (killed by signal 9 (killed))" {
		t.Errorf("reason: %q", got)
	}
}

func TestDialer(t *testing.T) {
	d := &Dialer{Config: Config{Path: "server", Args: []string{"--token=supersecretvalue", "a b"}}}
	if got, want := d.Target(), "server '--token=[REDACTED]' 'a b'"; got != want && !strings.Contains(got, "[REDACTED]") {
		t.Errorf("Target: got %q, want %q", got, want)
	}
	if strings.Contains(d.Target(), "supersecret") {
		t.Errorf("Target leaks: %q", d.Target())
	}
	if _, err := (&Dialer{Config: Config{Path: "/nonexistent/x"}}).Dial(context.Background()); err == nil {
		t.Error("Dial of a missing command succeeded")
	}
}

// A server that closes its stdout but keeps running (with a child of its
// own holding nothing) is killed with its group one stop step later: it can
// answer nothing any more. A server that exits closes its stdout too, and
// its exit is told as it was, not as a kill.
func TestClosedStdoutEndsTheChild(t *testing.T) {
	p, err := Start(sh("exec 1>&-; sleep 600 & sleep 600", nil))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, p)
	ex := p.Exit()
	if !strings.HasPrefix(ex.Reason, ClosedStdout) || ex.Signal != "killed" || !ex.Killed {
		t.Errorf("got %+v, want killed as %q", ex, ClosedStdout)
	}
	if testenv.Alive(p.PID()) {
		t.Errorf("pid %d still runs", p.PID())
	}

	p, err = Start(sh("exec 1>&-; sleep 0.1; exit 4", nil))
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, p)
	if ex := p.Exit(); ex.Reason != "exited with code 4" || ex.Killed {
		t.Errorf("a server exiting soon after closing stdout: got %+v", ex)
	}
}
