package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TempDir is t.TempDir for tests that the Windows test run executes under
// Wine (internal/wintest). On Linux, macOS and real Windows it is
// t.TempDir. Under Wine 8.0, Go 1.26's os.RemoveAll fails (it deletes
// through handle-relative calls Wine lacks), so t.TempDir's cleanup would
// fail a test that passed: there the directory is made with os.MkdirTemp
// and removed entry by entry with os.Remove, which Wine has, deepest first.
func TempDir(tb testing.TB) string {
	tb.Helper()
	if !UnderWine() {
		return tb.TempDir()
	}
	name := strings.Map(func(r rune) rune {
		if r < '0' || r > 'z' || (r > '9' && r < 'A') || (r > 'Z' && r < 'a') {
			return '_'
		}
		return r
	}, tb.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	dir, err := os.MkdirTemp("", name+"-")
	if err != nil {
		tb.Fatalf("testenv: TempDir: %v", err)
	}
	tb.Cleanup(func() {
		if err := removeTree(dir); err != nil {
			tb.Errorf("testenv: TempDir cleanup: %v", err)
		}
	})
	return dir
}

// removeTree removes dir and everything under it with os.Remove, children
// before their parents; a symlink is removed, never followed.
func removeTree(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	// Longest first puts every entry before the directory holding it.
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
