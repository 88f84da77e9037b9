package cfgfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Create writes data to path, a config file that does not exist yet
// (~/.claude/settings.json before anything saved one), the way Commit
// writes: under Claude Code's lock, into a temporary file beside it with
// mode perm, synced, then put in place with a hard link, which fails when
// a file appeared there meanwhile: nothing another program wrote is
// replaced (ErrChanged; read it and Update instead), and no reader ever
// sees the file half-written. The directory is made (0700) when missing.
func Create(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	unlock, err := TakeLock(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unlock()
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s: %w", path, ErrChanged)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".mcp-heal-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", path, ErrChanged)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
