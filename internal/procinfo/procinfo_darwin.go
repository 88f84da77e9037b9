package procinfo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// szomb is SZOMB in <sys/proc.h>: exited, not yet reaped.
const szomb = 5

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
	}
}

// procArgs reads kern.procargs2: a 32-bit argc, the executable path, NUL
// padding, then argc NUL-terminated arguments (then the environment, which
// is never read). Another user's process gives nothing.
func procArgs(pid int) (string, []string) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil || len(b) < 4 {
		return "", nil
	}
	argc := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	end := bytes.IndexByte(b, 0)
	if end < 0 {
		return "", nil
	}
	exe := string(b[:end])
	b = b[end:]
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	var args []string
	for len(args) < argc && len(b) > 0 {
		end := bytes.IndexByte(b, 0)
		if end < 0 {
			end = len(b)
		}
		args = append(args, string(b[:end]))
		b = b[min(end+1, len(b)):]
	}
	return exe, args
}

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
