package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestReadFile: a symbolic link to a regular file is followed (config
// files linked into place by a dotfile manager); a directory is refused; a
// file over the limit is refused after reading limit+1 bytes. (Devices and
// FIFOs: TestReadFileRefusesSpecial, unix.)
func TestReadFile(t *testing.T) {
	dir := testenv.TempDir(t)
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if why := testenv.TrySymlink(t, real, link); why != "" {
		t.Logf("no link to follow: %s", why)
	} else if b, err := ReadFile(link, 100); err != nil || string(b) != `{"a":1}` {
		t.Errorf("link to a regular file: %q, %v", b, err)
	}
	if _, err := ReadFile(real, 6); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "real.json: larger than mcp-heal accepts (6 bytes)") {
		t.Errorf("7 bytes with limit 6: %v", err)
	}
	if _, err := ReadFile(dir, 1<<20); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), dir+": not a regular file") {
		t.Errorf("%s: %v, want ErrNotRegular naming it", dir, err)
	}
	if got := Size(16 << 20); got != "16 MiB" {
		t.Errorf("Size(16 MiB) = %q", got)
	}
}
