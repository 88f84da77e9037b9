package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// target is one process the demo's client talks to: the example server
// itself (direct) or the shim in front of it.
type target struct {
	viaShim  bool
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	client   *example.Client
	stateDir string // XDG_STATE_HOME given to the shim
	stderr   *tailBuffer

	mu   sync.Mutex
	pids map[int]procinfo.Identity // every server seen, killed at the end if still that process
}

// startTarget starts bin with args, its own process group, and a client on
// its stdio.
func startTarget(bin string, args []string, viaShim bool, stateDir string) (*target, error) {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = ownGroup()
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateDir)
	t := &target{viaShim: viaShim, cmd: cmd, stateDir: stateDir, stderr: &tailBuffer{max: 40}, pids: map[int]procinfo.Identity{}}
	cmd.Stderr = t.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	t.stdin = in
	t.client = example.NewClient(out, in)
	return t, nil
}

// serverPID returns the pid of the example server now running: the process
// itself when direct; through the shim, the child_pid of the shim's state
// record, else the shim's child found in /proc.
func (t *target) serverPID() int {
	pid := t.serverPIDNow()
	if pid > 0 {
		t.mu.Lock()
		if _, seen := t.pids[pid]; !seen {
			if p, err := procinfo.Get(pid); err == nil {
				t.pids[pid] = p.Identity()
			}
		}
		t.mu.Unlock()
	}
	return pid
}

// isServer reports whether pid is still the server process seen under that
// pid: a server killed earlier in the demo has left its pid to the kernel,
// which may have given it to any process since.
func (t *target) isServer(pid int) bool {
	t.mu.Lock()
	id, ok := t.pids[pid]
	t.mu.Unlock()
	return ok && procinfo.Verify(pid, id) == nil
}

func (t *target) serverPIDNow() int {
	if !t.viaShim {
		return t.cmd.Process.Pid
	}
	if r := t.record(); r != nil && r.ChildPID > 0 && procinfo.Alive(r.ChildPID) && r.State == state.Running {
		return r.ChildPID
	}
	return procChild(t.cmd.Process.Pid)
}

// record returns the shim's state record, or nil.
func (t *target) record() *state.Record {
	if !t.viaShim {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(t.stateDir, "mcp-heal", "shims", strconv.Itoa(t.cmd.Process.Pid)+".json"))
	if err != nil {
		return nil
	}
	var r state.Record
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	return &r
}

// procChild returns a live child of pid (procinfo: /proc on Linux, sysctl
// on macOS), or 0.
func procChild(pid int) int {
	procs, _ := procinfo.List()
	for _, p := range procs {
		if p.PPID == pid && !p.Zombie {
			return p.PID
		}
	}
	return 0
}

// waitNewServer waits until a server other than old is running, returning
// its pid, or 0 after timeout.
func (t *target) waitNewServer(ctx context.Context, old int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p := t.serverPID(); p > 0 && p != old {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

// stop ends the target: close its stdin (a clean shutdown for the shim),
// then kill what is left, including every server pid seen (the shim puts
// its child in a process group of its own).
func (t *target) stop() {
	t.stdin.Close()
	done := make(chan struct{})
	go func() { t.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(6 * time.Second):
		kill(-t.cmd.Process.Pid)
		<-done
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid, id := range t.pids {
		if procinfo.Verify(pid, id) == nil {
			kill(pid)
		}
	}
}

// tailBuffer keeps the last max lines written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  string
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.part + string(p)
	parts := strings.Split(s, "\n")
	b.part = parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		b.lines = append(b.lines, l)
		if len(b.lines) > b.max {
			b.lines = b.lines[1:]
		}
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
