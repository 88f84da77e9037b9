package guardian

import (
	"bytes"
	"os"

	"golang.org/x/sys/unix"
)

// becomeSubreaper: macOS has no sub-reaper; the cookie sweep is what finds
// re-parented orphans there.
func becomeSubreaper() error { return nil }

// reapOrphans: nothing re-parents to us on macOS.
func reapOrphans() {}

// marked lists the processes of our uid whose environment carries the
// cookie, read with sysctl kern.procargs2 (argc, exec path, argv, then the
// environment, NUL-separated).
func marked(cookie string) []int {
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
