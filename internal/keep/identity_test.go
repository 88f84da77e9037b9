package keep

import "testing"

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
