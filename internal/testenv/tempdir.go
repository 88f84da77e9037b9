package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
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
		// A file another process still holds open (a child on its way
		// out) is only marked for deletion, and its directory is not
		// empty until the handle closes: try again for a while, as
		// t.TempDir does on Windows.
		var err error
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if err = removeTree(dir); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			// Tolerated, and said: what is left is held open by this
			// test process (a logger the code under test opened
			// in-process) or a child on its way out.
			tb.Logf("testenv: TempDir cleanup left %s: %v", dir, err)
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

// Symlink makes newname a symbolic link to oldname, or skips tb where
// none can be made (see TrySymlink).
func Symlink(tb testing.TB, oldname, newname string) {
	tb.Helper()
	if why := TrySymlink(tb, oldname, newname); why != "" {
		tb.Skip("needs a symbolic link: " + why)
	}
}

// TrySymlink makes newname a symbolic link to oldname and returns "", or
// returns why none can be made here: Windows without the privilege (or
// developer mode), and Wine 8.0, whose CreateSymbolicLink reports success
// and makes nothing (real Windows and unix make it). Anywhere else a
// failure fails tb.
func TrySymlink(tb testing.TB, oldname, newname string) string {
	tb.Helper()
	err := os.Symlink(oldname, newname)
	if err != nil {
		if runtime.GOOS == "windows" && !UnderWine() {
			return "Windows makes one only with the privilege or in developer mode: " + err.Error()
		}
		tb.Fatal(err)
	}
	if st, err := os.Lstat(newname); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		if UnderWine() {
			return "Wine 8.0 makes none (CreateSymbolicLink reports success and makes nothing); real Windows and unix run this"
		}
		tb.Fatalf("os.Symlink %s made no link (%v)", newname, err)
	}
	return ""
}
