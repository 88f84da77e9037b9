package guardian

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes orphaned descendants re-parent to this process
// instead of init, so that even one that scrubs its environment stays
// within reach (prctl(2) PR_SET_CHILD_SUBREAPER).
func becomeSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// reapOrphans kills and reaps every remaining child of this process (on
// Linux the sub-reaper inherits the orphans of its tree), until none is
// left. Call only once the server's leader has been waited for.
func reapOrphans() {
	for range 100 {
		kids := children()
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.ECHILD || (pid <= 0 && len(kids) == 0) {
			return
		}
	}
}

// children lists the direct children of this process.
func children() []int {
	self := os.Getpid()
	var out []int
	for _, pid := range pidsOfUser() {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// The fields after the parenthesised command: state ppid ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) > 2 {
			if pp, err := strconv.Atoi(string(f[1])); err == nil && pp == self {
				out = append(out, pid)
			}
		}
	}
	return out
}

// pidsOfUser lists the processes of our uid.
func pidsOfUser() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	uid := uint32(os.Getuid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid == uid {
			out = append(out, pid)
		}
	}
	return out
}

// marked lists the live processes of our uid whose environment carries
// the cookie (a zombie's environment reads empty: it is already dead).
func marked(cookie string) []int {
	needle := []byte(CookieVar + "=" + cookie + "\x00")
	var out []int
	for _, pid := range pidsOfUser() {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || len(b) == 0 {
			continue
		}
		if bytes.HasPrefix(b, needle) || bytes.Contains(b, append([]byte{0}, needle...)) {
			out = append(out, pid)
		}
	}
	return out
}
