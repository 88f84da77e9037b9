// Package procinfo answers what the supervisor, the hooks and the commands
// need to know about other processes: a pid's parent, process group, start
// time, executable, arguments and environment, its children, the list
// of all processes (or of one user's), and which process of a tree is
// stopped and whether it is the server (TreeOf: the root, or the holder of
// the server's stdout pipe).
//
// Its main use is identity. A pid alone names a process only while that
// process lives: after it exits (a shim SIGKILLed by the OOM killer leaves
// its state record behind) the kernel hands the number to the next process.
// A pid plus its start time names one process for the life of the machine,
// so every signal mcp-heal sends to a process it did not just spawn is
// preceded by Verify against the start time and executable recorded when
// the process was known to be ours.
//
// Linux reads /proc; macOS asks the kernel through sysctl (kern.proc.pid,
// kern.procargs2), so neither needs cgo; Windows opens the process
// (OpenProcess, GetProcessTimes) and lists them with a Toolhelp snapshot.
// Elsewhere every call returns ErrUnsupported.
package procinfo

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// ErrNotFound is returned for a pid that names no process.
var ErrNotFound = errors.New("no such process")

// ErrUnsupported is returned on systems where processes cannot be inspected.
var ErrUnsupported = errors.New("process inspection is not supported on this system")

// Info describes one process.
type Info struct {
	PID  int
	PPID int
	PGID int // process group
	// Start is when the process started (wall clock, for display).
	Start time.Time
	// StartKey is the kernel's own record of the start time, exact and
	// stable for the life of the process (Linux: clock ticks since boot;
	// macOS: seconds and microseconds). Compare it, not Start: Linux
	// derives Start from the boot time, which moves when the clock is set.
	StartKey string
	// Exe is the executable's path; empty when the system does not tell
	// (another user's process on Linux).
	Exe    string
	Args   []string
	Zombie bool // exited, not yet reaped by its parent
	// Stopped: stopped by a job-control signal (SIGSTOP, SIGTSTP; state
	// T). A tracing stop (a debugger at a breakpoint, state t) is not.
	Stopped bool
	// CPU is the user and system CPU time the process and its reaped
	// children spent, when HasCPU (Linux only so far).
	CPU    time.Duration
	HasCPU bool
}

// Identity is what is recorded about a process to recognise it later.
type Identity struct {
	StartKey string `json:"start,omitempty"`
	Exe      string `json:"exe,omitempty"`
}

// Identity returns i's identity.
func (i *Info) Identity() Identity { return Identity{StartKey: i.StartKey, Exe: i.Exe} }

// Self returns the identity of the calling process.
func Self() (Identity, error) {
	i, err := Get(os.Getpid())
	if err != nil {
		return Identity{}, err
	}
	return i.Identity(), nil
}

// MismatchError says that pid is alive but is not the process recorded.
type MismatchError struct {
	PID       int
	Want, Got Identity
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("pid %d is another process now (started %s, %s; the recorded one started %s, %s)",
		e.PID, e.Got.StartKey, orUnknown(e.Got.Exe), e.Want.StartKey, orUnknown(e.Want.Exe))
}

func orUnknown(s string) string {
	if s == "" {
		return "executable unknown"
	}
	return s
}

// Verify returns nil when pid is alive, not a zombie, and is the process
// recorded as want. Otherwise the error says why: ErrNotFound (gone or a
// zombie), *MismatchError (the pid was reused), or the lookup's error. An
// identity with no start time never verifies: a record without one was
// written by a version that did not record it, and cannot be trusted.
func Verify(pid int, want Identity) error {
	if pid <= 0 {
		return ErrNotFound
	}
	got, err := identify(pid)
	if err != nil {
		return err
	}
	if got.Zombie {
		return ErrNotFound
	}
	if want.StartKey == "" || got.StartKey != want.StartKey || !sameExe(got.Exe, want.Exe) {
		return &MismatchError{PID: pid, Want: want, Got: got.Identity()}
	}
	return nil
}

// Alive reports whether pid is a process that has not ended: it exists
// and is not a zombie (a zombie has exited; only its parent's wait is
// owed, so a shim that is one is gone). It is mcp-heal's one rule for
// "is this process alive" (state's records, the hooks, the shim, the
// guardian's sweep). It says nothing of whose process it is: signal only
// after Verify.
func Alive(pid int) bool {
	i, err := identify(pid)
	return err == nil && !i.Zombie
}

// sameExe compares executables. Linux appends " (deleted)" to the path of an
// executable replaced after the process started (a plugin update renames a
// new binary over the old one while shims run): that is still the same
// program. An empty recorded exe matches nothing: the start time alone
// would do, but the recorded side always knows its own executable.
func sameExe(got, want string) bool {
	if want == "" || got == "" {
		return false
	}
	return strings.TrimSuffix(got, " (deleted)") == strings.TrimSuffix(want, " (deleted)")
}

// StoppedIn returns the pid of a process stopped by a job-control signal
// among pid and its descendants, or 0 when none is. A server stopped this
// way answers nothing until it is continued: its calls hang. Linux reads
// the tree from /proc; macOS looks at pid alone (listing children there
// means listing every process). Windows has no such stop: always 0.
func StoppedIn(pid int) (int, error) {
	if !jobControl {
		return 0, nil
	}
	t, err := TreeOf(pid, 0)
	return t.Stopped, err
}

// Tree is what TreeOf saw of a process tree.
type Tree struct {
	// Stopped is a process of the tree stopped by a job-control signal
	// (as StoppedIn), 0 when none is.
	Stopped int
	// Server is a stopped process that is the server itself, 0 when none
	// is: the root (the process the shim started), or one whose stdout is
	// the server's stdout pipe (the server behind a wrapper: npx, sh -c,
	// uv run). A whole tree stopped at once has its root stopped. A child
	// or grandchild stopped alone (a job the server paused, a build, a
	// debugger's stop) is no stop of the server's: it still reads and can
	// answer.
	Server int
	// CPU is the CPU time the tree's processes and their reaped children
	// spent, when CPUKnown (Linux). A tree that computes adds to it; one
	// that waits does not.
	CPU      time.Duration
	CPUKnown bool
}

// treeCPU: Info.CPU is known (Linux).
const treeCPU = runtime.GOOS == "linux"

// TreeOf looks at pid and its descendants once (at most 4096 of them): a
// stopped one, whether a stopped one is the server (Tree.Server; out, when
// not zero, is the server's stdout pipe: PipeOf the reading end), and
// their CPU time. Where a process's stdout cannot be read (macOS, see
// stdoutIs) only the root counts as the server.
func TreeOf(pid int, out Pipe) (Tree, error) {
	var t Tree
	if !jobControl && !treeCPU {
		return t, nil // nothing to learn here (Windows)
	}
	seen := map[int]bool{}
	todo := []int{pid}
	t.CPUKnown = true
	for len(todo) > 0 && len(seen) < 4096 {
		p := todo[0]
		todo = todo[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		i, err := identify(p)
		if err != nil {
			if p == pid {
				return Tree{}, err
			}
			continue // exited meanwhile
		}
		if i.Stopped && jobControl {
			if t.Stopped == 0 {
				t.Stopped = p
			}
			if t.Server == 0 && (p == pid || out != 0 && stdoutIs(p, out)) {
				t.Server = p
			}
		}
		t.CPU += i.CPU
		t.CPUKnown = t.CPUKnown && i.HasCPU
		kids, err := Children(p)
		if err != nil && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrNotFound) {
			return Tree{}, err
		}
		todo = append(todo, kids...)
	}
	return t, nil
}

// Pipe names one pipe, so that the processes holding an end of it can be
// found (Linux, macOS: its inode). Zero: none, or unknown.
type Pipe uint64

// PipeOf returns the pipe f is an end of, zero when f is no pipe or the
// system cannot tell. It asks f.Stat, never f.Fd: Fd sets the pipe, shared
// by every holder, blocking.
func PipeOf(f *os.File) Pipe {
	if f == nil {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return 0
	}
	return pipeID(fi)
}

// Descendants returns the pids of the processes in procs whose parent is
// pid, then their children, breadth first: a process tree as it is now. A
// list read while processes come and go can hold a cycle; each pid is taken
// once.
func Descendants(procs []Info, pid int) []int {
	seen := map[int]bool{pid: true}
	var tree []int
	for i, parent := -1, pid; ; i++ {
		for _, p := range procs {
			if p.PPID == parent && !seen[p.PID] {
				seen[p.PID] = true
				tree = append(tree, p.PID)
			}
		}
		if i+1 >= len(tree) {
			return tree
		}
		parent = tree[i+1]
	}
}
