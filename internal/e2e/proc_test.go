//go:build unix

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// proc is one process: pid and argv.
type proc struct {
	PID  int
	Argv []string
}

func (p proc) String() string { return fmt.Sprintf("%d %s", p.PID, strings.Join(p.Argv, " ")) }

// descendants returns every live process below root (not root itself).
func descendants(root int) []proc {
	all, _ := procinfo.List()
	live := slices.DeleteFunc(all, func(p procinfo.Info) bool { return p.Zombie })
	argv := map[int][]string{}
	for _, p := range live {
		argv[p.PID] = p.Args
	}
	var out []proc
	for _, pid := range procinfo.Descendants(live, root) {
		out = append(out, proc{PID: pid, Argv: argv[pid]})
	}
	return out
}

// isShim reports whether argv is an `mcp-heal shim` process.
func isShim(argv []string) bool {
	return len(argv) > 1 && filepath.Base(argv[0]) == "mcp-heal" && argv[1] == "shim"
}

// serverMatch matches the real server (never a shim in front of it) whose
// command line contains every one of words.
func serverMatch(words ...string) func([]string) bool {
	return func(argv []string) bool {
		if isShim(argv) {
			return false
		}
		line := strings.Join(argv, " ")
		for _, w := range words {
			if !strings.Contains(line, w) {
				return false
			}
		}
		return true
	}
}

// findProcs returns the processes below root that match.
func findProcs(root int, match func([]string) bool) []proc {
	var out []proc
	for _, p := range descendants(root) {
		if match(p.Argv) {
			out = append(out, p)
		}
	}
	return out
}

// waitProc waits until exactly one process below root matches and is not
// one of old, and returns it.
func waitProc(root int, match func([]string) bool, timeout time.Duration, old ...int) (proc, error) {
	deadline := time.Now().Add(timeout)
	for {
		var fresh []proc
		for _, p := range findProcs(root, match) {
			isOld := false
			for _, o := range old {
				isOld = isOld || o == p.PID
			}
			if !isOld {
				fresh = append(fresh, p)
			}
		}
		if len(fresh) == 1 {
			return fresh[0], nil
		}
		if time.Now().After(deadline) {
			return proc{}, fmt.Errorf("no single server process matching below pid %d after %v (found %v; all below: %v)", root, timeout, fresh, descendants(root))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signalServer sends sig to the one server process below root that matches.
func signalServer(root int, match func([]string) bool, sig syscall.Signal) (proc, error) {
	p, err := waitProc(root, match, 10*time.Second)
	if err != nil {
		return p, err
	}
	if err := syscall.Kill(p.PID, sig); err != nil {
		return p, fmt.Errorf("signal %v to %v: %w", sig, p, err)
	}
	return p, nil
}

// killServer SIGKILLs the one server process below the session's claude
// that matches and waits until it is gone.
func (s *session) killServer(match func([]string) bool) (proc, error) {
	p, err := signalServer(s.claudePID(), match, syscall.SIGKILL)
	if err == nil && !testenv.Gone(5*time.Second, p.PID) {
		err = fmt.Errorf("%v still there 5 s after SIGKILL", p)
	}
	return p, err
}

// killDirectChild SIGTERMs the process Claude Code started for the
// server whose command line holds word (the shim when wrapped, the server
// alone): what Claude Code does to its stdio servers in the bug report.
func (s *session) killDirectChild(word string) (proc, error) {
	for _, p := range descendants(s.claudePID()) {
		line := strings.Join(p.Argv, " ")
		if strings.Contains(line, word) && testenv.ParentPID(p.PID) == s.claudePID() {
			if err := syscall.Kill(p.PID, syscall.SIGTERM); err != nil {
				return p, err
			}
			if !testenv.Gone(10*time.Second, p.PID) {
				return p, fmt.Errorf("%v still there 10 s after SIGTERM", p)
			}
			return p, nil
		}
	}
	return proc{}, fmt.Errorf("no child of claude %d runs %q: %v", s.claudePID(), word, descendants(s.claudePID()))
}

// killRestarted kills the server that matches (killServer) and waits up
// to within for the shim to start a new one in its place.
func (s *session) killRestarted(match func([]string) bool, within time.Duration) error {
	p, err := s.killServer(match)
	if err != nil {
		return err
	}
	if _, err := waitProc(s.claudePID(), match, within, p.PID); err != nil {
		return fmt.Errorf("the shim did not restart the server: %w", err)
	}
	return nil
}

// readBytes is how many bytes pid has read so far (rchar in /proc/pid/io).
func readBytes(pid int) int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "io"))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return -1
}

// readWatch notes how much a server has read before a call is asked for,
// so that the test can tell when the call has reached it.
type readWatch struct {
	p    proc
	base int64
}

// watchReads finds the one server below root that matches and notes how
// much it has read.
func watchReads(root int, match func([]string) bool) (*readWatch, error) {
	p, err := waitProc(root, match, 10*time.Second)
	if err != nil {
		return nil, err
	}
	// Wait for the server to be idle (nothing read for 200 ms), so that
	// what it reads next is the call.
	base := readBytes(p.PID)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		n := readBytes(p.PID)
		if n == base {
			break
		}
		base = n
	}
	return &readWatch{p: p, base: base}, nil
}

// killDuringCall waits until the server has read something new (the call)
// and has been working on it for a moment, then SIGKILLs it. A call that
// never reaches the server (Claude Code alone may have given up on it) is
// not an error here: the test judges what the model saw.
func (w *readWatch) killDuringCall() error {
	deadline := time.Now().Add(10 * time.Second)
	for readBytes(w.p.PID) <= w.base {
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	return syscall.Kill(w.p.PID, syscall.SIGKILL)
}

// processesOf lists the processes whose environment has HOME=home: what
// Claude Code, shims, guardians and servers of this test's HOME run.
func processesOf(home string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00HOME="+home+"\x00")) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

// killProcessesOf SIGKILLs every process of home (processesOf): what a
// test that failed half-way left running there.
func killProcessesOf(home string) {
	for _, p := range processesOf(home) {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
