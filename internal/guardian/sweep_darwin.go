package guardian

import (
	"bytes"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// becomeSubreaper: macOS has no sub-reaper; the cookie sweep is what finds
// re-parented orphans there.
func becomeSubreaper() error { return nil }

// killTree: macOS cannot list a process's descendants once they are
// orphans; the caller sweeps by cookie.
func killTree(int, string, map[int]bool) ([]int, bool) { return nil, false }

// reapDead: nothing re-parents to us on macOS.
func reapDead() {}

// marked lists the processes of our uid started since since whose
// environment carries the cookie, read with sysctl kern.procargs2 (argc,
// exec path, argv, then the environment, NUL-separated). The start time
// filter keeps the per-process sysctl to the few that can be ours.
func marked(cookie string, since time.Time) []int {
	needle := []byte("\x00" + CookieVar + "=" + cookie + "\x00")
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.uid", os.Getuid())
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range procs {
		pid := int(p.Proc.P_pid)
		if pid <= 0 || p.Proc.P_stat == 5 { // SZOMB
			continue
		}
		if st := time.Unix(p.Proc.P_starttime.Sec, int64(p.Proc.P_starttime.Usec)*1000); st.Add(time.Second).Before(since) {
			continue
		}
		b, err := unix.SysctlRaw("kern.procargs2", pid)
		if err != nil {
			continue
		}
		if bytes.Contains(append(b, 0), needle) {
			out = append(out, pid)
		}
	}
	return out
}
