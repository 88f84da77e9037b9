package healthy

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestEmpty: only a directory known to hold nothing is empty.
func TestEmpty(t *testing.T) {
	dir := testenv.TempDir(t)
	if !Empty(dir) || !Empty(filepath.Join(dir, "missing")) {
		t.Fatal("an empty or missing directory is empty")
	}
	if Empty("") {
		t.Fatal(`"" is not known to be empty`)
	}
	if err := os.WriteFile(filepath.Join(dir, "shim-1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if Empty(dir) || Empty(filepath.Join(dir, "shim-1")) {
		t.Fatal("a directory with a marker, or a file, is not empty")
	}
}

// TestHealthyImportsEarly keeps this package's initialiser early: none of
// its imports may come after os in Go's initialisation order (with them,
// it would run after crypto's, compress and encoding/json again).
func TestHealthyImportsEarly(t *testing.T) {
	if testenv.UnderWine() {
		t.Skip("reads the import graph with the go command, which the Wine prefix lacks (the Linux run checks it)")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/mcp-heal/mcp-heal/internal/hook/healthy").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "fmt", p == "reflect", p == "unicode", p == "path/filepath", p == "log/slog",
			strings.Contains(p, ".") && p != "github.com/mcp-heal/mcp-heal/internal/hook/healthy":
			t.Errorf("internal/hook/healthy imports %s, which Go initialises late", p)
		}
	}
}

// TestProcEnviron: on Linux, /proc/self/environ's scan gives what
// os.Getenv gives for every variable of this process (the first of a name
// that appears twice), and "" for one it lacks.
func TestProcEnviron(t *testing.T) {
	env, ok := procEnviron()
	if runtime.GOOS != "linux" {
		if ok {
			t.Fatal("procEnviron answered off Linux")
		}
		return
	}
	if !ok {
		t.Fatal("procEnviron could not read /proc/self/environ")
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if got, want := env.get(name), os.Getenv(name); got != want {
			t.Errorf("%s: %q, os.Getenv %q", name, got, want)
		}
	}
	if got := environ("A=1\x00AB=2\x00B\x00A=3\x00").get("A"); got != "1" {
		t.Errorf("A: %q, want the first, 1", got)
	}
	if got := environ("AB=2\x00B\x00").get("B"); got != "" {
		t.Errorf("B (no '='): %q, want \"\"", got)
	}
	if got := env.get("MCP_HEAL_NO_SUCH_VARIABLE"); got != "" {
		t.Errorf("a missing variable: %q", got)
	}
}
