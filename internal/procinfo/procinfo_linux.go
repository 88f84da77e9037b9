package procinfo

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's starttime: the kernel
// reports 100 to user space on every architecture Go supports (proc(5)).
const clockTicks = 100

// Get returns what /proc says about pid.
func Get(pid int) (*Info, error) {
	i, err := readProc(pid)
	if err != nil {
		return nil, err
	}
	if bt, err := bootTime(); err == nil {
		i.Start = bt.Add(time.Duration(i.startTicks) * time.Second / clockTicks)
	}
	if cl, err := os.ReadFile(procDir(pid) + "/cmdline"); err == nil && len(cl) > 0 {
		i.Args = strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
	}
	return i.Info, nil
}

// identify is what Verify needs, and no more: it runs before every signal
// and for every record a hook lists. The start time as a time and the
// arguments are left out.
func identify(pid int) (*Info, error) {
	i, err := readProc(pid)
	if err != nil {
		return nil, err
	}
	return i.Info, nil
}

func procDir(pid int) string { return "/proc/" + strconv.Itoa(pid) }

// readProc reads pid's stat and executable, what Get and identify share.
func readProc(pid int) (parsed, error) {
	if pid <= 0 {
		return parsed{}, ErrNotFound
	}
	dir := procDir(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return parsed{}, ErrNotFound
	}
	if err != nil {
		return parsed{}, err
	}
	i, err := parseStat(pid, stat)
	if err != nil {
		return parsed{}, err
	}
	if exe, err := os.Readlink(dir + "/exe"); err == nil {
		i.Exe = exe
	}
	return i, nil
}

// parsed is an Info with its start in clock ticks.
type parsed struct {
	*Info
	startTicks uint64
}

// parseStat reads "pid (comm) state ppid pgrp session tty tpgid flags
// minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
// num_threads itrealvalue starttime ..." (proc(5)). comm may hold spaces
// and parentheses, so the fields are counted from the last ')'.
func parseStat(pid int, stat []byte) (parsed, error) {
	j := bytes.LastIndexByte(stat, ')')
	if j < 0 {
		return parsed{}, errors.New("procinfo: malformed /proc stat of pid " + strconv.Itoa(pid))
	}
	f := strings.Fields(string(stat[j+1:]))
	if len(f) < 20 {
		return parsed{}, errors.New("procinfo: short /proc stat of pid " + strconv.Itoa(pid))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	ticks, err3 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return parsed{}, errors.New("procinfo: malformed /proc stat of pid " + strconv.Itoa(pid) + ": " + err.Error())
	}
	i := &Info{PID: pid, PPID: ppid, PGID: pgid, StartKey: f[19], Zombie: f[0] == "Z" || f[0] == "X", Stopped: f[0] == "T"}
	// utime stime cutime cstime, in USER_HZ (100 on every Linux since
	// 2.6: proc(5) reports clock ticks scaled to it).
	var cpu uint64
	i.HasCPU = true
	for _, s := range f[11:15] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			i.HasCPU = false
			break
		}
		cpu += n
	}
	if i.HasCPU {
		i.CPU = time.Duration(cpu) * (time.Second / 100)
	}
	return parsed{i, ticks}, nil
}

// bootTime is the btime line of /proc/stat.
func bootTime() (time.Time, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(s, 0), nil
		}
	}
	return time.Time{}, errors.New("procinfo: no btime in /proc/stat")
}

// List returns every process /proc shows. Processes that exit while it
// reads are left out.
func List() ([]Info, error) {
	var out []Info
	err := eachPID(func(pid int, _ os.DirEntry) {
		if i, err := Get(pid); err == nil {
			out = append(out, *i)
		}
	})
	return out, err
}

// eachPID calls f for every process directory in /proc.
func eachPID(f func(pid int, e os.DirEntry)) error {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			f(pid, e)
		}
	}
	return nil
}

// OfUser returns the pids of uid's processes: the owner of /proc/PID, one
// lstat each, nothing read. since is not used here (telling the start
// time would mean reading every process's stat). A zombie is listed; its
// environment reads empty.
func OfUser(uid int, since time.Time) ([]int, error) {
	var out []int
	err := eachPID(func(pid int, e os.DirEntry) {
		info, err := e.Info()
		if err != nil {
			return
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int64(st.Uid) == int64(uid) {
			out = append(out, pid)
		}
	})
	return out, err
}

// Environ returns pid's environment as it was at exec (/proc/PID/environ;
// later setenv calls are not seen). A zombie is ErrNotFound (the kernel
// answers ESRCH: its memory is gone); a kernel thread's reads empty;
// another user's process is an error.
func Environ(pid int) ([]string, error) {
	if pid <= 0 {
		return nil, ErrNotFound
	}
	b, err := os.ReadFile(procDir(pid) + "/environ")
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return nulStrings(b), nil
}

// Children returns the pids of pid's children from the kernel's own lists
// (/proc/PID/task/TID/children, one a thread): a read per thread of pid,
// where deriving them from List reads every process on the machine. The
// lists are exact only while the children are stopped (proc(5)), so a
// caller killing a tree lists it again until it is empty. ErrUnsupported
// when the kernel keeps no such list (it needs CONFIG_PROC_CHILDREN).
func Children(pid int) ([]int, error) {
	if pid <= 0 {
		return nil, ErrNotFound
	}
	dir := procDir(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if errors.Is(err, os.ErrNotExist) {
			if _, err := os.Stat(dir + t.Name()); err == nil {
				return nil, ErrUnsupported // the thread is there, its list is not
			}
		}
		if err != nil {
			continue // the thread ended
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}
