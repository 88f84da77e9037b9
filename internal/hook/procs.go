package hook

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// Proc is one running process.
type Proc = procinfo.Info

// listProcs lists every process (procinfo: /proc on Linux, sysctl on
// macOS).
func listProcs() ([]Proc, error) { return procinfo.List() }

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
// its descendants (an npx or uv wrapper's real server), each with the
// identity stop verifies before signalling it. It never matches claude
// itself or this process.
func (h *Handler) findServer(claude int, command string, args []string) ([]Proc, error) {
	if claude <= 1 {
		return nil, errors.New("CLAUDE_PID is not set")
	}
	procs, err := h.Procs()
	if err != nil {
		return nil, err
	}
	var found []Proc
	for _, p := range procs {
		if p.PPID != claude || p.PID == claude || p.PID == os.Getpid() || !runs(p.Args, command, args) {
			continue
		}
		if len(found) != 0 {
			return nil, errAmbiguous
		}
		found = append(found, p)
	}
	if len(found) == 0 {
		return nil, errors.New("no such child of Claude Code")
	}
	for _, pid := range procinfo.Descendants(procs, found[0].PID) {
		for _, p := range procs {
			if p.PID == pid && pid != os.Getpid() {
				found = append(found, p)
			}
		}
	}
	return found, nil
}

// stop ends a server's process tree: SIGTERM to each, then SIGKILL to
// what is still there after grace. Claude Code notices its child's exit and
// spawns a fresh process on the next call. Before each signal the process
// is checked to be the one found (same start time and executable): during
// the grace period a pid can be freed and handed to another process.
func (h *Handler) stop(procs []Proc, grace time.Duration) error {
	signal := func(p Proc, sig syscall.Signal) error {
		if err := procinfo.Verify(p.PID, p.Identity()); err != nil {
			return fmt.Errorf("not signalling pid %d: %w", p.PID, err)
		}
		return h.Signal(p.PID, sig)
	}
	if err := signal(procs[0], syscall.SIGTERM); err != nil {
		return err
	}
	for _, p := range procs[1:] {
		_ = signal(p, syscall.SIGTERM)
	}
	deadline := h.Now().Add(grace)
	for h.Now().Before(deadline) && anyAlive(procs) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range procs {
		if running(p) {
			_ = signal(p, syscall.SIGKILL)
		}
	}
	return nil
}

func anyAlive(procs []Proc) bool {
	for _, p := range procs {
		if running(p) {
			return true
		}
	}
	return false
}

// running reports whether p is still that process and not a zombie: a
// stopped server stays a zombie until Claude Code reaps it, and that is
// dead enough.
func running(p Proc) bool { return procinfo.Verify(p.PID, p.Identity()) == nil }
