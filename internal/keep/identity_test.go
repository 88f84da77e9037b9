package keep

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestIdentity: what the config entry says makes the identity; Claude
// Code's own environment (per session) does not.
func TestIdentity(t *testing.T) {
	base := Identity("mem", "npx", []string{"-y", "server-memory"}, map[string]string{"MEMORY_FILE": "/a"}, "/p", "/c")
	same := Identity("mem", "npx", []string{"-y", "server-memory"}, map[string]string{"MEMORY_FILE": "/a"}, "/p", "/c")
	if base != same {
		t.Fatal("identity is not deterministic")
	}
	for name, other := range map[string]string{
		"name":       Identity("mem2", "npx", []string{"-y", "server-memory"}, map[string]string{"MEMORY_FILE": "/a"}, "/p", "/c"),
		"cmd":        Identity("mem", "bunx", []string{"-y", "server-memory"}, map[string]string{"MEMORY_FILE": "/a"}, "/p", "/c"),
		"args":       Identity("mem", "npx", []string{"-y", "server-memory", "x"}, map[string]string{"MEMORY_FILE": "/a"}, "/p", "/c"),
		"split":      Identity("mem", "npx", []string{"-y server-memory"}, map[string]string{"MEMORY_FILE": "/a"}, "/p", "/c"),
		"env":        Identity("mem", "npx", []string{"-y", "server-memory"}, map[string]string{"MEMORY_FILE": "/b"}, "/p", "/c"),
		"cwd":        Identity("mem", "npx", []string{"-y", "server-memory"}, map[string]string{"MEMORY_FILE": "/a"}, "/q", "/c"),
		"config dir": Identity("mem", "npx", []string{"-y", "server-memory"}, map[string]string{"MEMORY_FILE": "/a"}, "/p", "/d"),
	} {
		if other == base {
			t.Errorf("a change of %s keeps the identity", name)
		}
	}
}

// TestSlot: the slot is the name, the project and the --keep-env values,
// not the command: a changed command stays in its slot (and replaces the
// kept server); another project or other values are another slot.
func TestSlot(t *testing.T) {
	env := map[string]string{"PROFILE": "work"}
	base := Slot("browser", env, "/a", "")
	if Slot("browser", map[string]string{"PROFILE": "work"}, "/a", "") != base {
		t.Fatal("slot is not deterministic")
	}
	for name, other := range map[string]string{
		"name":       Slot("browser2", env, "/a", ""),
		"project":    Slot("browser", env, "/b", ""),
		"env value":  Slot("browser", map[string]string{"PROFILE": "home"}, "/a", ""),
		"config dir": Slot("browser", env, "/a", "/other/.claude"),
	} {
		if other == base {
			t.Errorf("another %s is the same slot", name)
		}
	}
}

// TestSocketPathLongHome: with a home whose runtime directory would make a
// socket path longer than macOS allows (104 bytes, sockaddr_un.sun_path),
// the socket goes to the per-user directory in the temp dir, and a
// listener binds there.
func TestSocketPathLongHome(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows the runtime directory is under %LOCALAPPDATA%, not HOME: the premise of this test does not hold")
	}
	home := filepath.Join(t.TempDir(), strings.Repeat("h", 100))
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	id := Identity("srv", "srv", nil, nil, "/", "/")
	p, err := SocketPath(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) > 104 || strings.HasPrefix(p, home) {
		t.Fatalf("socket path %q (%d bytes): want at most 104 bytes, outside the long home", p, len(p))
	}
	t.Cleanup(func() { os.Remove(p) })
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatalf("listen on %s: %v", p, err)
	}
	l.Close()
}
