package procinfo

import (
	"errors"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobControl: Windows has no job-control stop (no SIGSTOP). A process
// whose threads were all suspended (a debugger, Process Explorer) is the
// nearest thing, and telling it means reading every thread's wait reason
// through undocumented calls: StoppedIn reports none, and such a server is
// caught by the hang probe (an unanswered ping) like any other hang.
const jobControl = false

// stillActive is STILL_ACTIVE, what GetExitCodeProcess reports for a
// process that has not exited.
const stillActive = 259

// Get returns what Windows says about pid: its start time and executable
// (OpenProcess with PROCESS_QUERY_LIMITED_INFORMATION, which a user has
// on their own processes) and its parent (a Toolhelp snapshot). Args stay
// empty: another process's command line lives in its memory, readable only
// through undocumented calls.
func Get(pid int) (*Info, error) {
	i, err := identify(pid)
	if err != nil {
		return nil, err
	}
	if procs, err := List(); err == nil {
		for _, p := range procs {
			if p.PID == pid {
				i.PPID = p.PPID
			}
		}
	}
	return i, nil
}

// identify opens pid and reads its creation time (the start key: 100 ns
// units since 1601, exact and fixed for the life of the process) and
// executable. A process that has exited but whose handle someone still
// holds can be opened: it is reported as a zombie, as on unix.
func identify(pid int) (*Info, error) {
	if pid <= 0 {
		return nil, ErrNotFound
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		// An unknown pid is ERROR_INVALID_PARAMETER.
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return nil, err
	}
	ticks := uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime)
	i := &Info{PID: pid, Start: time.Unix(0, created.Nanoseconds()), StartKey: strconv.FormatUint(ticks, 10)}
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err == nil && code != stillActive {
		i.Zombie = true
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err == nil {
		i.Exe = windows.UTF16ToString(buf[:n])
	}
	return i, nil
}

// List returns every process in a Toolhelp snapshot: pid and parent, and
// the start time and executable of those this user may open. Windows
// keeps the parent pid after the parent exited (the number may name
// another process by now): compare start times before trusting it.
func List() ([]Info, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(snap)
	var out []Info
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		info := Info{PID: int(e.ProcessID), PPID: int(e.ParentProcessID)}
		if i, err := identify(info.PID); err == nil {
			info.Start, info.StartKey, info.Exe, info.Zombie = i.Start, i.StartKey, i.Exe, i.Zombie
		}
		out = append(out, info)
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, err
	}
	return out, nil
}

// OfUser returns ErrUnsupported: only the keeper's sweep (unix) uses it.
func OfUser(uid int, since time.Time) ([]int, error) { return nil, ErrUnsupported }

// Environ returns ErrUnsupported: another process's environment lives in
// its memory, readable only through undocumented calls.
func Environ(pid int) ([]string, error) { return nil, ErrUnsupported }

// Children returns the pids whose recorded parent is pid and that started
// after it (a parent pid outlives its process on Windows, so an older
// process naming a reused pid as its parent is not its child).
func Children(pid int) ([]int, error) {
	parent, err := identify(pid)
	if err != nil {
		return nil, err
	}
	procs, err := List()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range procs {
		if p.PPID == pid && p.PID != pid && !p.Start.Before(parent.Start) {
			out = append(out, p.PID)
		}
	}
	return out, nil
}
