package hook

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Proc is one running process.
type Proc struct {
	PID, PPID int
	Argv      []string
}

// listProcs reads /proc (Linux). Processes that vanish while it reads are
// left out.
func listProcs() ([]Proc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parens.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		argv := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		out = append(out, Proc{PID: pid, PPID: ppid, Argv: argv})
	}
	return out, nil
}

// runs reports whether argv is a process started from the configured
// command and args: the args match exactly at the end, and the command (or
// its base name) is the program or its interpreter's script (a
// `#!/usr/bin/env node` server shows as "node /path/server args"). npx
// renames itself "npm exec ...".
func runs(argv []string, command string, args []string) bool {
	if command == "" || len(argv) < len(args)+1 {
		return false
	}
	n := len(argv) - len(args)
	for i, a := range args {
		if argv[n+i] != a {
			return false
		}
	}
	base := filepath.Base(command)
	head := argv[:n]
	for _, a := range head {
		if a == command || filepath.Base(a) == base {
			return true
		}
	}
	if base == "npx" && len(head) >= 2 && filepath.Base(head[0]) == "npm" && head[1] == "exec" {
		return true
	}
	return false
}

var errAmbiguous = errors.New("more than one process matches")

// findServer returns the one child of claude running command args, and
// its descendants (an npx or uv wrapper's real server). It never matches
// claude itself or this process.
func (h *Handler) findServer(claude int, command string, args []string) ([]int, error) {
	if claude <= 1 {
		return nil, errors.New("CLAUDE_PID is not set")
	}
	procs, err := h.Procs()
	if err != nil {
		return nil, err
	}
	found := 0
	for _, p := range procs {
		if p.PPID != claude || p.PID == claude || p.PID == os.Getpid() || !runs(p.Argv, command, args) {
			continue
		}
		if found != 0 {
			return nil, errAmbiguous
		}
		found = p.PID
	}
	if found == 0 {
		return nil, errors.New("no such child of Claude Code")
	}
	tree := []int{found}
	for i := 0; i < len(tree); i++ {
		for _, p := range procs {
			if p.PPID == tree[i] && p.PID != os.Getpid() {
				tree = append(tree, p.PID)
			}
		}
	}
	return tree, nil
}

// stop ends a server's process tree: SIGTERM to each, then SIGKILL to
// what is still there after grace. Claude Code notices its child's exit and
// spawns a fresh process on the next call.
func (h *Handler) stop(pids []int, grace time.Duration) error {
	if err := h.Signal(pids[0], syscall.SIGTERM); err != nil {
		return err
	}
	for _, pid := range pids[1:] {
		_ = h.Signal(pid, syscall.SIGTERM)
	}
	deadline := h.Now().Add(grace)
	for h.Now().Before(deadline) && anyAlive(pids) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range pids {
		if running(pid) {
			_ = h.Signal(pid, syscall.SIGKILL)
		}
	}
	return nil
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if running(pid) {
			return true
		}
	}
	return false
}

// running reports whether pid exists and is not a zombie: a stopped server
// stays a zombie until Claude Code reaps it, and that is dead enough.
func running(pid int) bool {
	if !state.Alive(pid) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
