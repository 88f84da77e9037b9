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
			return func() { os.Remove(lock) }, nil
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
