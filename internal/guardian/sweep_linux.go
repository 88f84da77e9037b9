package guardian

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
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
// the kernel does not list children (procinfo.Children: ErrUnsupported
// without CONFIG_PROC_CHILDREN): the caller sweeps by cookie then.
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
			if !procinfo.Alive(pid) {
				continue
			}
			live++
			outside = killNoted(pid, pgid, seen, outside)
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
// the subtrees rooted at skip. ok is false when pid's children cannot be
// listed.
func descendants(pid int, skip map[int]bool) ([]int, bool) {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		kids, err := procinfo.Children(p)
		if err != nil {
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
