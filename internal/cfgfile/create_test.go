package cfgfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestCreate: a missing file is made whole, with its directory; a file
// that exists (another program made it first) is never replaced.
func TestCreate(t *testing.T) {
	dir := testenv.TempDir(t)
	path := filepath.Join(dir, "sub", "settings.json")
	if err := Create(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{}\n" {
		t.Fatalf("made %q, %v", b, err)
	}
	if err := Create(path, []byte(`{"x":1}`), 0o600); !errors.Is(err, ErrChanged) {
		t.Fatalf("over an existing file: %v, want ErrChanged", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{}\n" {
		t.Fatalf("the existing file was replaced: %q", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("left beside it: %v", ents)
	}
}
