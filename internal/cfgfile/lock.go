package cfgfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Claude Code saves ~/.claude.json holding a lock directory beside it,
// "<file>.lock", made with mkdir and judged abandoned when its mtime is
// older than about 10 s; a live holder refreshes the mtime (the
// proper-lockfile convention, docs/claude-code-behaviour.md). Commit takes
// the same lock around its compare-and-swap, so it never interleaves with
// Claude Code's own read-modify-write of the file.
const lockStale = 10 * time.Second

// lockWait bounds how long Commit waits for a live holder: longer than
// lockStale, so an abandoned lock is always outlived.
var lockWait = lockStale + 5*time.Second

// A lock mcp-heal holds looks, to Claude Code, as if it were taken
// lockStale-holdFor ago: its mtime is set back so that it turns stale
// holdFor after the last refresh, and a live holder refreshes it every
// refreshEvery. A SIGKILLed wrap's lock thus delays Claude Code's next save
// by holdFor at most, not by lockStale (before: `claude mcp add` took 10 s
// longer; proper-lockfile judges a lock by its mtime alone, it knows no
// owner). A commit holds the lock for milliseconds; a holder that stalls
// past holdFor loses the lock's protection, not its correctness: the swap
// still compares what it replaces (swap.go). 2 s rather than less: on a
// file system that keeps whole seconds (HFS+) the mtime set is up to 1 s
// older than asked, and a refresh must still land before the lock looks
// stale.
const (
	holdFor      = 2 * time.Second
	refreshEvery = holdFor / 5
)

// TakeLock is how Commit takes the lock: Lock, except in tests, which
// replace it to act just before Commit locks (claudecfg/wrap's replan test).
var TakeLock = Lock

// Lock takes "<target>.lock", as Claude Code does, and returns its release.
func Lock(target string) (unlock func(), err error) {
	lock := target + ".lock"
	deadline := time.Now().Add(lockWait)
	for {
		err := os.Mkdir(lock, 0o700)
		if err == nil {
			return hold(lock), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock: %w", err)
		}
		if st, err := os.Lstat(lock); err == nil && time.Since(st.ModTime()) > lockStale {
			// Abandoned by a holder that died: proper-lockfile removes it
			// the same way. (Remove fails on anything but an empty dir or
			// a file, which is then left alone and waited out.)
			if os.Remove(lock) == nil {
				continue
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another program holds the lock %s and has not released it for %s", lock, lockWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hold keeps lock, just made, looking held for holdFor at a time, until the
// returned release removes it. Only the directory made here is touched: a
// lock another program took over meanwhile (it judged this one stale) is
// neither refreshed nor removed.
func hold(lock string) (release func()) {
	made, err := os.Lstat(lock)
	if err != nil {
		return func() {}
	}
	ours := func() bool {
		st, err := os.Lstat(lock)
		return err == nil && os.SameFile(st, made)
	}
	touch := func() {
		if ours() {
			t := time.Now().Add(holdFor - lockStale)
			_ = os.Chtimes(lock, t, t)
		}
	}
	touch()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(refreshEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				touch()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		if ours() {
			os.Remove(lock)
		}
	}
}
