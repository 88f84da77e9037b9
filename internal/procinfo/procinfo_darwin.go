package procinfo

import (
	"errors"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// szomb and sstop are SZOMB and SSTOP in <sys/proc.h>: exited, not yet
// reaped; stopped by a signal.
const (
	szomb = 5
	sstop = 4
)

// Get returns what the kernel says about pid (sysctl kern.proc.pid and
// kern.procargs2; no cgo).
func Get(pid int) (*Info, error) {
	if pid <= 0 {
		return nil, ErrNotFound
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		// The kernel answers an unknown pid with an empty buffer, which
		// x/sys reports as a size mismatch.
		if errors.Is(err, unix.ESRCH) || errors.Is(err, unix.EIO) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	if int(kp.Proc.P_pid) != pid {
		return nil, ErrNotFound
	}
	i := fromKinfo(kp)
	i.Exe, i.Args = procArgs(pid)
	return i, nil
}

// identify is Get: one sysctl gives the identity, another the executable.
func identify(pid int) (*Info, error) { return Get(pid) }

func fromKinfo(kp *unix.KinfoProc) *Info {
	st := kp.Proc.P_starttime
	return &Info{
		PID:      int(kp.Proc.P_pid),
		PPID:     int(kp.Eproc.Ppid),
		PGID:     int(kp.Eproc.Pgid),
		Start:    time.Unix(int64(st.Sec), int64(st.Usec)*1000),
		StartKey: strconv.FormatInt(int64(st.Sec), 10) + "." + strconv.FormatInt(int64(st.Usec), 10),
		Zombie:   kp.Proc.P_stat == szomb,
		Stopped:  kp.Proc.P_stat == sstop,
	}
}

// procArgs returns pid's executable and arguments. Another user's process
// gives nothing.
func procArgs(pid int) (string, []string) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", nil
	}
	exe, args, _ := splitProcArgs(b)
	return exe, args
}

// Environ returns pid's environment as it was at exec, from
// kern.procargs2. The list ends with what the kernel stores after the
// environment (executable_path=... and the like), which no caller asks
// for by name. Another user's process is an error.
func Environ(pid int) ([]string, error) {
	if pid <= 0 {
		return nil, ErrNotFound
	}
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	_, _, rest := splitProcArgs(b)
	return nulStrings(rest), nil
}

// OfUser returns the pids of uid's live processes (sysctl kern.proc.uid).
// When since is not zero, those that started more than a second before it
// are left out: reading a process's environment is one sysctl each, so a
// caller looking for what it started lets the kernel's start times cut the
// list first.
func OfUser(uid int, since time.Time) ([]int, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.uid", uid)
	if err != nil {
		return nil, err
	}
	var out []int
	for k := range kps {
		i := fromKinfo(&kps[k])
		if i.PID <= 0 || i.Zombie || i.Start.Add(time.Second).Before(since) {
			continue
		}
		out = append(out, i.PID)
	}
	return out, nil
}

// Children returns ErrUnsupported: macOS lists a process's children only
// through libproc, which needs cgo; Descendants over List derives them.
func Children(pid int) ([]int, error) { return nil, ErrUnsupported }

// List returns every process (sysctl kern.proc.all).
func List() ([]Info, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(kps))
	for k := range kps {
		i := fromKinfo(&kps[k])
		if i.PID == 0 {
			continue
		}
		i.Exe, i.Args = procArgs(i.PID)
		out = append(out, *i)
	}
	return out, nil
}
