package procinfo

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A stop is the server's only when it is the server itself: the process
// started (sh), or behind a wrapper the one whose stdout is the server's
// pipe (the inner sh); a child that writes elsewhere (sleep, to
// /dev/null) stopped alone is not. Issue 30 item 2: on the old code any
// stopped process of the tree was the server's stop.
func TestTreeOfServer(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := PipeOf(r)
	if out == 0 {
		t.Fatal("PipeOf a pipe: 0")
	}
	f, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := PipeOf(f); p != 0 {
		t.Fatalf("PipeOf a regular file: %d", p)
	}
	cmd := exec.Command("sh", "-c", "sh -c 'sleep 1003 >/dev/null & wait' & wait")
	cmd.Stdout = w
	root := startCmd(t, cmd).Process.Pid
	w.Close()
	var inner, sleep int
	for deadline := time.Now().Add(10 * time.Second); sleep == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the tree did not start")
		}
		if k, _ := Children(root); len(k) == 1 {
			inner = k[0]
			if k, _ := Children(inner); len(k) == 1 {
				sleep = k[0]
			}
		}
	}
	if !stdoutIs(inner, out) || stdoutIs(sleep, out) {
		t.Fatalf("stdout of the inner sh %v, of sleep %v", stdoutIs(inner, out), stdoutIs(sleep, out))
	}
	for _, c := range []struct {
		name            string
		stop            []int
		stopped, server int
	}{
		{"a child writing elsewhere", []int{sleep}, sleep, 0},
		{"the server behind the wrapper", []int{inner}, inner, inner},
		{"the process started", []int{root}, root, root},
		{"the whole tree", []int{root, inner, sleep}, root, root},
	} {
		for _, p := range c.stop {
			syscall.Kill(p, syscall.SIGSTOP)
		}
		// The tree is read once every stop has landed.
		for deadline := time.Now().Add(10 * time.Second); !all(c.stop, func(p int) bool { i, _ := Get(p); return i != nil && i.Stopped }); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen stopped", c.name)
			}
		}
		tr, err := TreeOf(root, out)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Stopped != c.stopped || tr.Server != c.server {
			t.Errorf("%s stopped: Stopped %d, Server %d; want %d, %d", c.name, tr.Stopped, tr.Server, c.stopped, c.server)
		}
		for _, p := range c.stop {
			syscall.Kill(p, syscall.SIGCONT)
		}
		for deadline := time.Now().Add(10 * time.Second); tr.Stopped != 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s continued: still %d stopped", c.name, tr.Stopped)
			}
			tr, _ = TreeOf(root, out)
		}
	}
	// The pipe unknown: the process started alone is the server.
	syscall.Kill(inner, syscall.SIGSTOP)
	defer syscall.Kill(inner, syscall.SIGCONT)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		tr, _ := TreeOf(root, 0)
		if tr.Stopped == inner {
			if tr.Server != 0 {
				t.Errorf("no pipe given: the stopped wrapper's child %d counted as the server", tr.Server)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the inner sh not seen stopped")
		}
	}
}

func all(ps []int, f func(int) bool) bool {
	for _, p := range ps {
		if !f(p) {
			return false
		}
	}
	return true
}
