package cfgtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// StateHome points XDG_STATE_HOME (where Commit keeps backups) at a
// temporary directory.
func StateHome(t *testing.T) string {
	t.Helper()
	d := testenv.TempDir(t)
	testenv.UseStateDir(t, d)
	return d
}

// ListDir lists the names in dir.
func ListDir(t *testing.T, dir string) []string {
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

// Write writes a config file (0600), making its directories.
func Write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// JSON is s as the inside of a JSON string. A Windows path needs it: its
// backslashes are escapes in JSON (C:\users reads as a bad \u escape).
func JSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
