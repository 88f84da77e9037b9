//go:build unix

package guardian

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// NewCookie returns a fresh random cookie.
func NewCookie() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Sweep kills every live process of our uid (started since since, where
// the platform can tell cheaply) marked with cookie, except
// this one, and returns those that were outside process group pgid (0: all
// of them), i.e. that had left the server's group. It repeats until a scan
// finds none, so that a process forking while it is killed is caught too.
// The cookie is the proof that a process is ours: a pid that is reused
// between the scan and the kill would need our uid and the same 96-bit
// cookie in its environment.
func Sweep(cookie string, pgid int, since time.Time) []int {
	if cookie == "" {
		return nil
	}
	self := os.Getpid()
	seen := map[int]bool{}
	var outside []int
	for range 20 {
		found := 0
		for _, pid := range marked(cookie, since) {
			if pid == self {
				continue
			}
			found++
			outside = killNoted(pid, pgid, seen, outside)
		}
		if found == 0 {
			break
		}
		// A killed process is gone a moment later (or a zombie, which
		// the scan skips): look again.
		time.Sleep(10 * time.Millisecond)
	}
	return outside
}

// marked lists the live processes of our uid (started since since, where
// the platform can tell cheaply) whose environment carries the cookie. A
// zombie is not listed or its environment reads empty: it is already dead.
func marked(cookie string, since time.Time) []int {
	pids, _ := procinfo.OfUser(os.Getuid(), since)
	return withCookie(pids, cookie)
}

// withCookie keeps the pids whose environment carries cookie.
func withCookie(pids []int, cookie string) []int {
	kv := CookieVar + "=" + cookie
	var out []int
	for _, pid := range pids {
		if env, err := procinfo.Environ(pid); err == nil && slices.Contains(env, kv) {
			out = append(out, pid)
		}
	}
	return out
}

// killNoted SIGKILLs pid and returns outside with pid added when, the
// first time it is seen, it was outside process group pgid (0: any).
func killNoted(pid, pgid int, seen map[int]bool, outside []int) []int {
	if !seen[pid] {
		seen[pid] = true
		if g, err := syscall.Getpgid(pid); err == nil && g != pgid {
			outside = append(outside, pid)
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return outside
}
