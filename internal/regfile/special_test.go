//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFileRefusesSpecial: a link to a device and a FIFO are refused
// without blocking (Windows has neither in its file system).
func TestReadFileRefusesSpecial(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{zero, fifo} {
		if _, err := ReadFile(p, 1<<20); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p+": not a regular file") {
			t.Errorf("%s: %v, want ErrNotRegular naming it", p, err)
		}
	}
}
