package cfgfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/sjson"

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

// TestCommitSwapsBackAConcurrentWrite drives the compare-and-swap's rare
// paths deterministically: another program's write lands between Commit's
// check and its swap (and, the second time, again between the swap and
// the swap back). Its version must end up in the file and ErrChanged be
// returned.
func TestCommitSwapsBackAConcurrentWrite(t *testing.T) {
	cfgtest.StateHome(t)
	for _, writes := range []int{1, 2, 3} {
		t.Run(strconv.Itoa(writes)+" concurrent writes", func(t *testing.T) {
			if writes > 1 && errors.Is(exchangeFiles("", ""), errNoExchange) {
				t.Skip("a write between the swap and the swap back needs an atomic exchange, which this OS lacks (Windows): Commit renames after a check, the one-write case")
			}
			dir := testenv.TempDir(t)
			path := filepath.Join(dir, ".claude.json")
			old := []byte(`{"n":0}`)
			os.WriteFile(path, old, 0o600)
			n := 0
			write := func() {
				n++
				tmp := filepath.Join(dir, "other-tmp")
				os.WriteFile(tmp, []byte(`{"n":`+strconv.Itoa(n)+`}`), 0o600)
				if err := os.Rename(tmp, path); err != nil {
					t.Fatal(err)
				}
			}
			Exchange = func(a, b string) error {
				if n < writes {
					write()
				}
				return exchangeFiles(a, b)
			}
			defer func() { Exchange = exchangeFiles }()
			if _, err := Commit(path, old, []byte(`{"n":0,"wrapped":true}`)); !errors.Is(err, ErrChanged) {
				t.Fatalf("got %v, want ErrChanged", err)
			}
			if got, _ := os.ReadFile(path); string(got) != `{"n":`+strconv.Itoa(writes)+`}` {
				t.Fatalf("file holds %s, want the last concurrent write n=%d", got, writes)
			}
			if got := cfgtest.ListDir(t, dir); len(got) != 1 {
				t.Fatalf("left behind: %v", got)
			}
		})
	}
}

// TestCommitTakesClaudeCodeLock: Commit waits for a live holder of Claude
// Code's lock directory, and takes over one abandoned for longer than the
// stale time.
func TestCommitTakesClaudeCodeLock(t *testing.T) {
	cfgtest.StateHome(t)
	path := filepath.Join(testenv.TempDir(t), ".claude.json")
	os.WriteFile(path, []byte(`{}`), 0o600)
	lock := path + ".lock"
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		released <- time.Now()
		os.Remove(lock)
	}()
	if _, err := Commit(path, []byte(`{}`), []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	default:
		t.Fatal("Commit wrote while another program held the lock")
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock left behind: %v", err)
	}

	// Abandoned: its mtime is older than the stale time.
	os.Mkdir(lock, 0o700)
	old := time.Now().Add(-2 * lockStale)
	os.Chtimes(lock, old, old)
	start := time.Now()
	if _, err := Commit(path, []byte(`{"a":1}`), []byte(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s to take over an abandoned lock", took)
	}
}

// TestUpdateStartsOver: another program's write lands between Update's read
// and its swap; Update undoes the swap and starts over from the newer
// contents, so the result holds both changes.
func TestUpdateStartsOver(t *testing.T) {
	cfgtest.StateHome(t)
	dir := testenv.TempDir(t)
	path := filepath.Join(dir, ".claude.json")
	os.WriteFile(path, []byte(`{"n":0}`), 0o600)
	wrote := false
	Exchange = func(a, b string) error {
		if !wrote {
			wrote = true
			os.WriteFile(filepath.Join(dir, "other"), []byte(`{"n":1}`), 0o600)
			os.Rename(filepath.Join(dir, "other"), path)
		}
		return exchangeFiles(a, b)
	}
	defer func() { Exchange = exchangeFiles }()
	calls := 0
	backup, err := Update(path, func(cur []byte) ([]byte, error) {
		calls++
		return sjson.SetBytes(cur, "wrapped", true)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{"n":1,"wrapped":true}` || calls != 2 {
		t.Fatalf("got %s after %d calls, want the concurrent write kept and the change applied on the second try", got, calls)
	}
	if b, _ := os.ReadFile(backup); string(b) != `{"n":1}` {
		t.Fatalf("backup holds %s, want the version replaced", b)
	}
	// Nothing to change: nothing written, no backup.
	if backup, err := Update(path, func(cur []byte) ([]byte, error) { return cur, nil }); err != nil || backup != "" {
		t.Fatalf("no-op Update: backup %q, %v", backup, err)
	}
}
