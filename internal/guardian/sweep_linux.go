package guardian

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes orphaned descendants re-parent to this process
// instead of init, so that even one that scrubs its environment stays
// within reach (prctl(2) PR_SET_CHILD_SUBREAPER).
func becomeSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// killTree kills every descendant of this process (with the sub-reaper,
// every survivor of the server's tree is one: an orphan re-parents to us)
// except the trees of the live servers others, and reaps those that are
// our children, until none is left. While other servers live, an orphan
// is killed only if it carries cookie (it could be theirs). It returns the
// pids that were outside process group pgid (daemons). ok is false when
// the kernel does not list children (/proc/PID/task/TID/children needs
// CONFIG_PROC_CHILDREN): the caller sweeps by cookie then.
func killTree(pgid int, cookie string, others map[int]bool) (outside []int, ok bool) {
	seen := map[int]bool{}
	for round := 0; round < 100; round++ {
		tree, ok := descendants(os.Getpid(), others)
		if ok && len(others) > 0 {
			tree = withCookie(tree, cookie)
		}
		if !ok {
			return outside, false
		}
		live := 0
		for _, pid := range tree {
			if zombie(pid) {
				continue
			}
			live++
			if !seen[pid] {
				seen[pid] = true
				if g, err := syscall.Getpgid(pid); err == nil && g != pgid {
					outside = append(outside, pid)
				}
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		reapDead()
		if len(tree) == 0 {
			return outside, true
		}
		if live > 0 || round > 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	return outside, true
}

// reapDead reaps the children that have already ended.
func reapDead() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// descendants lists the descendants of pid, breadth first, leaving out
// the subtrees rooted at skip.
func descendants(pid int, skip map[int]bool) ([]int, bool) {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		kids, ok := children(p)
		if !ok {
			if p == pid {
				return nil, false
			}
			continue // it just exited
		}
		for _, k := range kids {
			if !skip[k] {
				out = append(out, k)
				queue = append(queue, k)
			}
		}
		if len(out) > 100000 {
			break
		}
	}
	return out, true
}

// children lists the children of pid from /proc/PID/task/*/children.
func children(pid int) ([]int, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && pid == os.Getpid() {
				return nil, false
			}
			continue
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, true
}

// zombie reports whether pid has ended and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// withCookie keeps the pids whose environment carries cookie.
func withCookie(pids []int, cookie string) []int {
	var out []int
	for _, pid := range pids {
		if hasCookie(pid, cookie) {
			out = append(out, pid)
		}
	}
	return out
}

func hasCookie(pid int, cookie string) bool {
	needle := []byte(CookieVar + "=" + cookie + "\x00")
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || len(b) == 0 {
		return false
	}
	return bytes.HasPrefix(b, needle) || bytes.Contains(b, append([]byte{0}, needle...))
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
func marked(cookie string, _ time.Time) []int {
	return withCookie(pidsOfUser(), cookie)
}
