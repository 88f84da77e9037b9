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
// `#!/usr/bin/env node` server shows as "node /path/server args").
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
	for _, a := range argv[:n] {
		if a == command || filepath.Base(a) == base {
			return true
		}
	}
	return false
}

var errAmbiguous = errors.New("more than one process matches")

// findServer returns the one child of claude running command args. It
// never matches claude itself or this process.
func (h *Handler) findServer(claude int, command string, args []string) (int, error) {
	if claude <= 1 {
		return 0, errors.New("CLAUDE_PID is not set")
	}
	procs, err := h.Procs()
	if err != nil {
		return 0, err
	}
	found := 0
	for _, p := range procs {
		if p.PPID != claude || p.PID == claude || p.PID == os.Getpid() || !runs(p.Argv, command, args) {
			continue
		}
		if found != 0 {
			return 0, errAmbiguous
		}
		found = p.PID
	}
	if found == 0 {
		return 0, errors.New("no such child of Claude Code")
	}
	return found, nil
}

// stop ends pid: SIGTERM, then SIGKILL if it is still there after grace.
// Claude Code notices the exit and spawns a fresh process on the next call.
func (h *Handler) stop(pid int, grace time.Duration) error {
	if err := h.Signal(pid, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := h.Now().Add(grace)
	for h.Now().Before(deadline) {
		if !state.Alive(pid) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	if state.Alive(pid) {
		return h.Signal(pid, syscall.SIGKILL)
	}
	return nil
}
