package claudecfg

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// stateHome points XDG_STATE_HOME (backups) at a temporary directory.
func stateHome(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	testenv.UseStateDir(t, d)
	return d
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestCommitSymlinkedPrivateConfig(t *testing.T) {
	stateHome(t)
	home := t.TempDir()
	dotfiles := filepath.Join(t.TempDir(), "dotfiles")
	os.Mkdir(dotfiles, 0o700)
	real := filepath.Join(dotfiles, "claude.json")
	orig, projects := genConfig(4, 300, "  ")
	if err := os.WriteFile(real, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, ".claude.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	wrapped := wrapAll(t, orig, paths(projects), testShim)
	backup, err := Commit(link, orig, wrapped)
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
	if got := listDir(t, dotfiles); len(got) != 1 {
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
	if _, err := Commit(link, wrapped, restored); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(link); !bytes.Equal(got, orig) {
		t.Fatal("wrap then unwrap did not restore the file")
	}
}

func TestCommitFailureLeavesFileUntouched(t *testing.T) {
	stateHome(t)
	dir := t.TempDir()
	path := filepath.Join(dir, ".mcp.json")
	old := []byte(`{"mcpServers":{"a":{"command":"x"}}}`)
	os.WriteFile(path, old, 0o644)
	fail := func(string, string) error { return errors.New("disk on fire") }
	rename, exchange = fail, fail
	defer func() { rename, exchange = os.Rename, exchangeFiles }()
	if _, err := Commit(path, old, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("got %v, want the exchange error", err)
	}
	// Where no atomic exchange exists, the checked rename fails the same.
	exchange = func(string, string) error { return errNoExchange }
	if _, err := Commit(path, old, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("got %v, want the rename error", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Fatal("the file changed")
	}
	if got := listDir(t, dir); len(got) != 1 {
		t.Fatalf("left behind: %v", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}
}

func TestCommitRefusesConcurrentChange(t *testing.T) {
	stateHome(t)
	path := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(path, []byte(`{"a":2}`), 0o600)
	if _, err := Commit(path, []byte(`{"a":1}`), []byte(`{"a":3}`)); !errors.Is(err, ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"a":2}` {
		t.Fatalf("file changed to %s", got)
	}
}

func TestBackupsArePruned(t *testing.T) {
	stateHome(t)
	path := filepath.Join(t.TempDir(), "c.json")
	cur := []byte(`{"n":0}`)
	os.WriteFile(path, cur, 0o600)
	for i := 1; i <= KeepBackups+5; i++ {
		next := []byte(`{"n":` + strings.Repeat("1", i) + `}`)
		if _, err := Commit(path, cur, next); err != nil {
			t.Fatal(err)
		}
		cur = next
	}
	if got := listDir(t, BackupDir()); len(got) != KeepBackups {
		t.Fatalf("got %d backups, want %d", len(got), KeepBackups)
	}
}
