//go:build unix

package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// While a timing test holds the machine lock, the heavy test cannot take
// it, and another timing test can.
func TestMachineLock(t *testing.T) {
	t.Setenv("MCP_HEAL_TEST_CACHE", t.TempDir())
	try := func(how int) error {
		f, err := os.OpenFile(filepath.Join(CacheDir(), "machine.lock"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	}
	t.Run("timing", func(t *testing.T) {
		TimingSensitive(t)
		if err := try(syscall.LOCK_EX); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("the heavy test's lock beside a timing test: %v, want EWOULDBLOCK", err)
		}
		if err := try(syscall.LOCK_SH); err != nil {
			t.Errorf("a second timing test: %v, want the lock", err)
		}
	})
	t.Run("heavy", func(t *testing.T) {
		LoadsMachine(t)
		if err := try(syscall.LOCK_SH); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("a timing test beside the heavy one: %v, want EWOULDBLOCK", err)
		}
	})
	if err := try(syscall.LOCK_EX); err != nil {
		t.Errorf("after both ended: %v, want the lock free", err)
	}
}
