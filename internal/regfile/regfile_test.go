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

// TestReadFile: a symbolic link to a regular file is followed (config
// files linked into place by a dotfile manager); a link to a device, a
// FIFO and a directory are refused without blocking; a file over the
// limit is refused after reading limit+1 bytes.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link, 100); err != nil || string(b) != `{"a":1}` {
		t.Errorf("link to a regular file: %q, %v", b, err)
	}
	if _, err := ReadFile(real, 6); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "real.json: larger than mcp-heal accepts (6 bytes)") {
		t.Errorf("7 bytes with limit 6: %v", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{zero, fifo, dir} {
		if _, err := ReadFile(p, 1<<20); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p+": not a regular file") {
			t.Errorf("%s: %v, want ErrNotRegular naming it", p, err)
		}
	}
	if got := Size(16 << 20); got != "16 MiB" {
		t.Errorf("Size(16 MiB) = %q", got)
	}
}
