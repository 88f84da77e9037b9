package healthy

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/paths"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestAttentionIsPaths: where Attention answers, it is internal/paths'
// attention directory (adrg/xdg's rule, the one rule), followed as the
// environment changes; where the rule is not plain it says "" (the
// binary then decides as before).
func TestAttentionIsPaths(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("Attention answers on Linux and macOS only (elsewhere internal/hook decides, as TestAttentionElsewhere shows): the unix runs check it")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, home, state string
		plain             bool
	}{
		{"defaults", dir, "", true},
		{"XDG_STATE_HOME", dir, filepath.Join(dir, "s"), true},
		{"XDG_STATE_HOME not clean", dir, dir + "//s/./t/", true},
		{"relative XDG_STATE_HOME", dir, "rel/s", false},
		{"XDG_STATE_HOME from ~", dir, "~/s", false},
		{"XDG_STATE_HOME from $HOME", dir, "$HOME/s", false},
		{"no home", "", "", false},
		{"relative home", "home", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", tc.home)
			t.Setenv("XDG_STATE_HOME", tc.state)
			got := Attention(runtime.GOOS, os.Getenv, isDir)
			if !tc.plain {
				if got != "" {
					t.Fatalf("Attention %q, want \"\" (not plain)", got)
				}
				return
			}
			if want := paths.Current().Attention; got != want {
				t.Fatalf("Attention %q, paths.Current %q", got, want)
			}
		})
	}
}

// TestAttentionDarwin: macOS keeps its old layout (~/.local/state/mcp-heal)
// where it exists, else Application Support, as internal/paths does.
func TestAttentionDarwin(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	none := func(string) bool { return false }
	old := func(p string) bool { return p == "/Users/u/.local/state/mcp-heal" }
	home := env("HOME", "/Users/u")
	if got, want := Attention("darwin", home, none), paths.For("darwin", home).Attention; got != want {
		t.Errorf("new user: %q, want %q", got, want)
	}
	if got, want := Attention("darwin", home, old), "/Users/u/.local/state/mcp-heal/attention"; got != want {
		t.Errorf("old layout: %q, want %q", got, want)
	}
	set := env("HOME", "/Users/u", "XDG_STATE_HOME", "/s")
	if got, want := Attention("darwin", set, old), paths.For("darwin", set).Attention; got != want {
		t.Errorf("XDG_STATE_HOME: %q, want %q", got, want)
	}
}

// TestAttentionElsewhere: on Windows (and any other platform) Attention
// does not answer; internal/hook decides.
func TestAttentionElsewhere(t *testing.T) {
	for _, goos := range []string{"windows", "freebsd"} {
		if got := Attention(goos, func(string) string { return "/h" }, isDir); got != "" {
			t.Errorf("%s: %q, want \"\"", goos, got)
		}
	}
}

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
