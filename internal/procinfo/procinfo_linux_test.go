package procinfo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// start runs argv in its own process group and stops it at cleanup.
func start(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	return startCmd(t, exec.Command(argv[0], argv[1:]...))
}

// startCmd starts cmd in its own process group and stops it at cleanup.
func startCmd(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// zombie returns the pid of a child that has exited and is not reaped
// until cleanup.
func zombie(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		i, err := Get(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if i.Zombie {
			return cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			t.Fatal("child of true never became a zombie")
		}
	}
}

// reaped returns the pid of a child that has exited and been reaped.
func reaped(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestGetRealProcesses(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal("sleep not found: ", err)
	}
	sleep, _ = filepath.EvalSymlinks(sleep)
	// comm of a program named like this reads "pid (x) (y z) S ...":
	// the fields must be counted from the last parenthesis.
	odd := filepath.Join(t.TempDir(), "x) (y z")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	before := time.Now()
	plain := start(t, "sleep", "1000")
	weird := start(t, odd, "999")

	tests := []struct {
		name                 string
		pid, ppid, pgid      int
		exe                  string
		args                 []string
		startedAfter, before time.Time
	}{
		{"self", os.Getpid(), os.Getppid(), syscall.Getpgrp(), self, os.Args, time.Now().Add(-time.Hour), time.Now()},
		{"sleep", plain.Process.Pid, os.Getpid(), plain.Process.Pid, sleep, []string{"sleep", "1000"}, before, time.Now()},
		{"odd name", weird.Process.Pid, os.Getpid(), weird.Process.Pid, sleep, []string{odd, "999"}, before, time.Now()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, err := Get(tt.pid)
			if err != nil {
				t.Fatal(err)
			}
			if i.PID != tt.pid || i.PPID != tt.ppid || i.PGID != tt.pgid {
				t.Errorf("got pid %d ppid %d pgid %d, want %d %d %d", i.PID, i.PPID, i.PGID, tt.pid, tt.ppid, tt.pgid)
			}
			if i.Exe != tt.exe {
				t.Errorf("got exe %q, want %q", i.Exe, tt.exe)
			}
			if !slices.Equal(i.Args, tt.args) {
				t.Errorf("got args %q, want %q", i.Args, tt.args)
			}
			// Start has the 10 ms resolution of USER_HZ and the boot time's
			// one second: allow that much either side.
			if i.Start.Before(tt.startedAfter.Add(-1100*time.Millisecond)) || i.Start.After(tt.before.Add(1100*time.Millisecond)) {
				t.Errorf("got start %v, want between %v and %v", i.Start, tt.startedAfter, tt.before)
			}
			if i.Zombie {
				t.Error("got zombie, want running")
			}
			again, err := Get(tt.pid)
			if err != nil || again.StartKey != i.StartKey || i.StartKey == "" {
				t.Errorf("start key %q then %q (%v): want the same, non-empty", i.StartKey, again.StartKey, err)
			}
			if err := Verify(tt.pid, i.Identity()); err != nil {
				t.Errorf("verify own identity: %v", err)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	sleep := start(t, "sleep", "1000")
	pid := sleep.Process.Pid
	me, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	info, err := Get(pid)
	if err != nil {
		t.Fatal(err)
	}
	id := info.Identity()

	exited := reaped(t)
	zombie := zombie(t)

	tests := []struct {
		name     string
		pid      int
		want     Identity
		notFound bool
		mismatch bool
	}{
		{"same process", pid, id, false, false},
		{"another start time (pid reused)", pid, Identity{StartKey: "1", Exe: id.Exe}, false, true},
		{"another executable", pid, Identity{StartKey: id.StartKey, Exe: "/usr/bin/mcp-heal"}, false, true},
		{"our own identity on another pid", pid, me, false, true},
		{"no start recorded", pid, Identity{Exe: id.Exe}, false, true},
		{"replaced executable", pid, Identity{StartKey: id.StartKey, Exe: id.Exe + " (deleted)"}, false, false},
		{"exited and reaped", exited, id, true, false},
		{"zombie", zombie, id, true, false},
		{"pid 0", 0, id, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.pid, tt.want)
			var mm *MismatchError
			switch {
			case tt.notFound && !errors.Is(err, ErrNotFound):
				t.Errorf("got %v, want ErrNotFound", err)
			case tt.mismatch && !errors.As(err, &mm):
				t.Errorf("got %v, want a mismatch", err)
			case !tt.notFound && !tt.mismatch && err != nil:
				t.Errorf("got %v, want nil", err)
			}
		})
	}
}

func TestListAndDescendants(t *testing.T) {
	sh := start(t, "sh", "-c", "sleep 1001 & sleep 1002 & sh -c 'sleep 1003; :' & wait")
	var procs []Info
	var tree []int
	for deadline := time.Now().Add(10 * time.Second); len(tree) < 4; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("got tree %v, want 4 descendants of sh", tree)
		}
		var err error
		if procs, err = List(); err != nil {
			t.Fatal(err)
		}
		tree = Descendants(procs, sh.Process.Pid)
	}
	var args [][]string
	for _, p := range procs {
		if slices.Contains(tree, p.PID) {
			args = append(args, p.Args)
			if p.PGID != sh.Process.Pid {
				t.Errorf("pid %d: got pgid %d, want %d", p.PID, p.PGID, sh.Process.Pid)
			}
		}
	}
	for _, want := range []string{"1001", "1002", "1003"} {
		if !slices.ContainsFunc(args, func(a []string) bool { return slices.Equal(a, []string{"sleep", want}) }) {
			t.Errorf("got %q, want sleep %s among the descendants", args, want)
		}
	}
	if !slices.ContainsFunc(procs, func(p Info) bool { return p.PID == os.Getpid() }) {
		t.Error("List left out this process")
	}
	if got := Descendants([]Info{{PID: 2, PPID: 3}, {PID: 3, PPID: 2}}, 2); !slices.Equal(got, []int{3}) {
		t.Errorf("cycle: got %v, want [3]", got)
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		stat      string
		ppid, pg  int
		key       string
		zombie    bool
		wantError bool
	}{
		{"12 (sleep) S 1 12 12 0 -1 4194304 90 0 0 0 0 0 0 0 20 0 1 0 4242 8000 1 ", 1, 12, "4242", false, false},
		{"12 (a) (b c)) Z 7 8 8 0 -1 4194304 90 0 0 0 0 0 0 0 20 0 1 0 99 8000 1 ", 7, 8, "99", true, false},
		{"12 (sleep S 1", 0, 0, "", false, true},
		{"12 (sleep) S 1 12", 0, 0, "", false, true},
		{"12 (sleep) S x 12 12 0 -1 4194304 90 0 0 0 0 0 0 0 20 0 1 0 4242", 0, 0, "", false, true},
	}
	for _, tt := range tests {
		i, err := parseStat(12, []byte(tt.stat))
		if tt.wantError {
			if err == nil {
				t.Errorf("%q: got %+v, want an error", tt.stat, i.Info)
			}
			continue
		}
		if err != nil || i.PPID != tt.ppid || i.PGID != tt.pg || i.StartKey != tt.key || i.Zombie != tt.zombie || strconv.FormatUint(i.startTicks, 10) != tt.key {
			t.Errorf("%q: got %+v %v, want ppid %d pgid %d start %s zombie %v", tt.stat, i, err, tt.ppid, tt.pg, tt.key, tt.zombie)
		}
	}
}

func TestAlive(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		want bool
	}{
		{"self", os.Getpid(), true},
		{"running child", start(t, "sleep", "1000").Process.Pid, true},
		{"zombie", zombie(t), false},
		{"exited and reaped", reaped(t), false},
		{"pid 0", 0, false},
		{"negative pid", -1, false},
	}
	for _, tt := range tests {
		if got := Alive(tt.pid); got != tt.want {
			t.Errorf("%s (pid %d): got %v, want %v", tt.name, tt.pid, got, tt.want)
		}
	}
}

func TestEnviron(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	// An empty value, one with '=' and spaces, and a name that is a prefix
	// of another: each must come back as its own entry, exactly.
	cmd.Env = []string{"MCP_HEAL_TREE=abc", "MCP_HEAL_TREE_X=def", "EMPTY=", "ODD=a=b c"}
	startCmd(t, cmd)
	// Start returns as exec closes the child's descriptors, before the
	// kernel has recorded where the new environment lies: until then it
	// reads empty.
	var env []string
	for deadline := time.Now().Add(10 * time.Second); len(env) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var err error
		if env, err = Environ(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(env, cmd.Env) {
		t.Errorf("got %q, want %q", env, cmd.Env)
	}
	for _, pid := range []int{zombie(t), reaped(t), 0} {
		if env, err := Environ(pid); !errors.Is(err, ErrNotFound) {
			t.Errorf("pid %d: got %q, %v, want ErrNotFound", pid, env, err)
		}
	}
}

func TestChildren(t *testing.T) {
	sh := start(t, "sh", "-c", "sleep 1001 & sleep 1002 & wait")
	var kids []int
	for deadline := time.Now().Add(10 * time.Second); len(kids) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("got children %v of sh, want two sleeps", kids)
		}
		var err error
		if kids, err = Children(sh.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	procs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if want := Descendants(procs, sh.Process.Pid); !sameSet(kids, want) {
		t.Errorf("got children %v, want %v (from List)", kids, want)
	}
	// This process has several threads, and a child is listed under the
	// thread that forked it: every thread's list must be read.
	mine, err := Children(os.Getpid())
	if err != nil || !slices.Contains(mine, sh.Process.Pid) {
		t.Errorf("own children: got %v, %v, want sh %d among them", mine, err, sh.Process.Pid)
	}
	for _, pid := range []int{reaped(t), 0} {
		if kids, err := Children(pid); !errors.Is(err, ErrNotFound) {
			t.Errorf("pid %d: got %v, %v, want ErrNotFound", pid, kids, err)
		}
	}
}

func sameSet(a, b []int) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestOfUser(t *testing.T) {
	sleep := start(t, "sleep", "1000").Process.Pid
	pids, err := OfUser(os.Getuid(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{os.Getpid(), sleep} {
		if !slices.Contains(pids, pid) {
			t.Errorf("pid %d of ours left out of %v", pid, pids)
		}
	}
	// Another user's process is not listed: pid 1 belongs to root, or,
	// when the tests run as root, the list of a user with no processes.
	other, owner := 1, 0
	if os.Getuid() == 0 {
		owner = 65534 // nobody
	}
	theirs, err := OfUser(owner, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 && !slices.Contains(theirs, other) {
		t.Errorf("root's list %v lacks pid 1", theirs)
	}
	mine, _ := OfUser(os.Getuid(), time.Time{})
	if os.Getuid() != 0 && slices.Contains(mine, other) {
		t.Errorf("our list holds pid 1, which is root's")
	}
	if os.Getuid() == 0 && slices.Contains(theirs, os.Getpid()) {
		t.Errorf("nobody's list %v holds this process", theirs)
	}
}

// A server stopped with SIGSTOP is seen at once, whether it is the process
// the shim started or a grandchild under an npx-style wrapper; continued, it
// is running again.
func TestStoppedIn(t *testing.T) {
	sh := start(t, "sh", "-c", "sleep 1003 & wait")
	var kids []int
	for deadline := time.Now().Add(10 * time.Second); len(kids) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("sh started no sleep")
		}
		kids, _ = Children(sh.Process.Pid)
	}
	if p, err := StoppedIn(sh.Process.Pid); p != 0 || err != nil {
		t.Fatalf("nothing stopped yet: got %d, %v", p, err)
	}
	for _, target := range []int{kids[0], sh.Process.Pid} {
		if err := syscall.Kill(target, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		var p int
		for deadline := time.Now().Add(10 * time.Second); p != target; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d stopped: StoppedIn(%d) = %d", target, sh.Process.Pid, p)
			}
			p, _ = StoppedIn(sh.Process.Pid)
		}
		syscall.Kill(target, syscall.SIGCONT)
		for deadline := time.Now().Add(10 * time.Second); p != 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d continued: StoppedIn still %d", target, p)
			}
			p, _ = StoppedIn(sh.Process.Pid)
		}
	}
	if _, err := StoppedIn(reaped(t)); !errors.Is(err, ErrNotFound) {
		t.Errorf("a reaped pid: got %v, want ErrNotFound", err)
	}
}
