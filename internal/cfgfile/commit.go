// Package cfgfile rewrites a config file that another program (Claude Code,
// an editor) may be writing at the same time: a compare-and-swap under
// Claude Code's own lock, a backup first, never a half-written file. It
// knows nothing of what the file holds; claudecfg/wrap decides the bytes.
package cfgfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	dirs "github.com/mcp-heal/mcp-heal/internal/paths"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// KeepBackups is how many backups of each config file Commit keeps.
const KeepBackups = 20

// BackupDir is where Commit keeps backups: the state directory's backups.
func BackupDir() string { return filepath.Join(dirs.Current().State, "backups") }

// ErrChanged means the file changed between reading it and committing.
var ErrChanged = errors.New("the file changed while mcp-heal was rewriting it; nothing was written, run the command again")

// Commit replaces the contents of path, which held old when it was read,
// with new, as a compare-and-swap: a concurrent writer's update is never
// lost and the file is never half-written.
//
// It resolves symlinks (the link stays a link and the target is
// rewritten), takes Claude Code's own lock on the file (lock.go), checks
// the file still holds old (else ErrChanged), saves a timestamped backup of
// old (0600), writes new to a temporary file beside the target with the
// target's mode (and, when permitted, owner) and syncs it, then swaps it in
// (swap.go), which verifies what it replaced. On any error the target holds
// what it held, or what a concurrent writer put there, and no temporary
// file is left. It returns the backup's path (none with ErrChanged: old was
// not replaced).
func Commit(path string, old, new []byte) (backup string, err error) {
	return CommitFunc(path, func(cur []byte) ([]byte, error) {
		if !bytes.Equal(cur, old) {
			return nil, fmt.Errorf("%s: %w", path, ErrChanged)
		}
		return new, nil
	})
}

// MaxUpdates bounds how often Update starts over while other programs keep
// changing the file.
const MaxUpdates = 5

// Update rewrites path with f, reading it under Claude Code's lock, so
// that the file f sees is the file replaced: f gets the current contents
// and returns the new ones (equal bytes: nothing is written, backup is
// ""). When a writer that ignores the lock changes the file between the
// read and the swap, the swap is undone (as in Commit) and Update starts
// over with the newer contents, up to 5 times. f must be a pure function
// of its input (wrap and unwrap are). It returns the backup's path.
func Update(path string, f func(cur []byte) ([]byte, error)) (backup string, err error) {
	for range MaxUpdates {
		backup, err = CommitFunc(path, f)
		if !errors.Is(err, ErrChanged) {
			return backup, err
		}
	}
	return backup, err
}

// CommitFunc is one compare-and-swap: lock, read, f, back up, swap in.
func CommitFunc(path string, f func(cur []byte) ([]byte, error)) (backup string, err error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	unlock, err := TakeLock(target)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	defer unlock()
	st, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	old, err := regfile.ReadConfig(target)
	if err != nil {
		return "", err
	}
	new, err := f(old)
	if err != nil || bytes.Equal(new, old) {
		return "", err
	}
	if backup, err = saveBackup(target, old); err != nil {
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	tmp, err := writeTemp(target, new, st)
	if err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	defer tmp.Close()
	if err := swapIn(tmp, target, old); errors.Is(err, ErrChanged) {
		// Another program's version is in place and old was never
		// replaced: its backup would only push a real one out (Plan.Commit
		// and Update try again).
		os.Remove(backup)
		return "", fmt.Errorf("write %s: %w", path, err)
	} else if err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(filepath.Dir(target)); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	pruneBackups(BackupDir(), backupPrefix(target))
	return backup, nil
}

// writeTemp writes data to a new temporary file beside target, with
// target's mode and (best effort) owner, synced. The caller swaps it in
// and closes it; the file stays open so that its inode cannot be reused
// while swapIn compares identities. On any error (a full disk) the
// temporary file is closed and removed: no copy of the config is left
// beside it.
func writeTemp(target string, data []byte, st os.FileInfo) (*os.File, error) {
	dir, base := filepath.Split(target)
	f, err := os.CreateTemp(dir, "."+base+".mcp-heal-*")
	if err != nil {
		return nil, err
	}
	if err = f.Chmod(st.Mode().Perm()); err == nil {
		chownLike(f, st)
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// backupPrefix is the start of the names of target's backups.
func backupPrefix(target string) string {
	h := sha256.Sum256([]byte(target))
	return strings.TrimPrefix(filepath.Base(target), ".") + "." + hex.EncodeToString(h[:4]) + "."
}

// saveBackup writes data to BackupDir as <base>.<hash of path>.<time>.bak.
// (Commit prunes old backups of the same file once the new version is in.)
func saveBackup(target string, data []byte) (string, error) {
	dir := BackupDir()
	// 0700, and never a link: backups hold the whole config, secrets and
	// all.
	if err := state.EnsureDir(dir); err != nil {
		return "", err
	}
	prefix := backupPrefix(target)
	now := time.Now().UTC()
	var f *os.File
	var name string
	for i := 0; ; i++ {
		name = filepath.Join(dir, fmt.Sprintf("%s%s-%d.bak", prefix, now.Format("20060102T150405.000000000Z"), i))
		var err error
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || i > 100 {
			return "", err
		}
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func pruneBackups(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var mine []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".bak") {
			mine = append(mine, e.Name())
		}
	}
	sort.Strings(mine) // the timestamp sorts in time order
	for len(mine) > KeepBackups {
		os.Remove(filepath.Join(dir, mine[0]))
		mine = mine[1:]
	}
}
