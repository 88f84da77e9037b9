package claudecfg

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
	"syscall"
	"time"

	dirs "github.com/mcp-heal/mcp-heal/internal/paths"
)

// KeepBackups is how many backups of each config file Commit keeps.
const KeepBackups = 20

// BackupDir is where Commit keeps backups: the state directory's backups.
func BackupDir() string { return filepath.Join(dirs.Current().State, "backups") }

// rename is os.Rename; tests replace it to make the last step fail.
var rename = os.Rename

// ErrChanged means the file changed between reading it and committing.
var ErrChanged = errors.New("the file changed while mcp-heal was rewriting it; nothing was written, run the command again")

// Commit replaces the contents of path, which held old when it was read,
// with new: it resolves symlinks (the link stays a link and the target is
// rewritten), saves a timestamped backup of old (0600), writes new to a
// temporary file beside the target with the target's mode (and, when
// permitted, owner), syncs it and renames it over the target. On any error
// the target is untouched and no temporary file is left. It returns the
// backup's path.
func Commit(path string, old, new []byte) (backup string, err error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	cur, err := os.ReadFile(target)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(cur, old) {
		return "", fmt.Errorf("%s: %w", path, ErrChanged)
	}
	if backup, err = saveBackup(target, old); err != nil {
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	if err := writeAtomic(target, new, st); err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	return backup, nil
}

func writeAtomic(target string, data []byte, st os.FileInfo) (err error) {
	dir, base := filepath.Split(target)
	f, err := os.CreateTemp(dir, "."+base+".mcp-heal-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(st.Mode().Perm()); err != nil {
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(sys.Uid), int(sys.Gid)) // works only for root or same owner; best effort
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = rename(tmp, target); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// saveBackup writes data to BackupDir as <base>.<hash of path>.<time>.bak
// and prunes old backups of the same file.
func saveBackup(target string, data []byte) (string, error) {
	dir := BackupDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(target))
	prefix := strings.TrimPrefix(filepath.Base(target), ".") + "." + hex.EncodeToString(h[:4]) + "."
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
	pruneBackups(dir, prefix)
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
