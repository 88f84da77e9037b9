package wrap

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/cfgfile"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

func TestCommitSymlinkedPrivateConfig(t *testing.T) {
	cfgtest.StateHome(t)
	home := testenv.TempDir(t)
	dotfiles := filepath.Join(testenv.TempDir(t), "dotfiles")
	os.Mkdir(dotfiles, 0o700)
	real := filepath.Join(dotfiles, "claude.json")
	orig, projects := cfgtest.GenConfig(4, 300, "  ")
	if err := os.WriteFile(real, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, ".claude.json")
	testenv.Symlink(t, real, link)
	wrapped := wrapAll(t, orig, paths(projects), testShim)
	backup, err := cfgfile.Commit(link, orig, wrapped)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(real); !bytes.Equal(got, wrapped) {
		t.Fatal("the link's target does not hold the new contents")
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode got %v, want 0600", fi.Mode().Perm())
	}
	if got := cfgtest.ListDir(t, dotfiles); len(got) != 1 {
		t.Fatalf("files beside the target: %v, want only claude.json (no temp files)", got)
	}
	if b, _ := os.ReadFile(backup); !bytes.Equal(b, orig) {
		t.Fatal("the backup does not hold the old contents")
	}
	if fi, _ := os.Stat(backup); fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode got %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(backup)); fi.Mode().Perm() != 0o700 {
		t.Fatalf("backup dir mode got %v, want 0700", fi.Mode().Perm())
	}
	// And back, byte for byte, through the link.
	restored := unwrapAll(t, wrapped, paths(projects))
	if _, err := cfgfile.Commit(link, wrapped, restored); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(link); !bytes.Equal(got, orig) {
		t.Fatal("wrap then unwrap did not restore the file")
	}
}
