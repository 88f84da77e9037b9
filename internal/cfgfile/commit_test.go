package cfgfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

func TestCommitFailureLeavesFileUntouched(t *testing.T) {
	cfgtest.StateHome(t)
	dir := testenv.TempDir(t)
	path := filepath.Join(dir, ".mcp.json")
	old := []byte(`{"mcpServers":{"a":{"command":"x"}}}`)
	os.WriteFile(path, old, 0o644)
	fail := func(string, string) error { return errors.New("disk on fire") }
	rename, Exchange = fail, fail
	defer func() { rename, Exchange = os.Rename, exchangeFiles }()
	defer failHandleRenames(fail)()
	if _, err := Commit(path, old, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("got %v, want the exchange error", err)
	}
	// Where no atomic exchange exists, the checked rename fails the same.
	Exchange = func(string, string) error { return errNoExchange }
	if _, err := Commit(path, old, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("got %v, want the rename error", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Fatal("the file changed")
	}
	if got := cfgtest.ListDir(t, dir); len(got) != 1 {
		t.Fatalf("left behind: %v", got)
	}
	// (Windows has no file modes.)
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}
}

func TestCommitRefusesConcurrentChange(t *testing.T) {
	cfgtest.StateHome(t)
	path := filepath.Join(testenv.TempDir(t), "c.json")
	os.WriteFile(path, []byte(`{"a":2}`), 0o600)
	if _, err := Commit(path, []byte(`{"a":1}`), []byte(`{"a":3}`)); !errors.Is(err, ErrChanged) {
		t.Fatalf("got %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"a":2}` {
		t.Fatalf("file changed to %s", got)
	}
}

func TestBackupsArePruned(t *testing.T) {
	cfgtest.StateHome(t)
	path := filepath.Join(testenv.TempDir(t), "c.json")
	cur := []byte(`{"n":0}`)
	os.WriteFile(path, cur, 0o600)
	for i := 1; i <= KeepBackups+5; i++ {
		next := []byte(`{"n":` + strings.Repeat("1", i) + `}`)
		if _, err := Commit(path, cur, next); err != nil {
			t.Fatal(err)
		}
		cur = next
	}
	if got := cfgtest.ListDir(t, BackupDir()); len(got) != KeepBackups {
		t.Fatalf("got %d backups, want %d", len(got), KeepBackups)
	}
}
