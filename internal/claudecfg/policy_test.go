package claudecfg_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestDiscoverPolicy: Discover asks ccpolicy about every entry, and
// Lookup never returns one Claude Code's policy blocks: a denied entry
// still takes its name (measured: a local entry denied by command leaves
// the user's entry of that name unrun too), and a wrapped entry whose real
// server a deny rule names is blocked (the shim refuses it).
func TestDiscoverPolicy(t *testing.T) {
	base, _ := filepath.EvalSymlinks(testenv.TempDir(t))
	o := claudecfg.Options{Home: filepath.Join(base, "home"), ProjectDir: filepath.Join(base, "proj"), ManagedDir: filepath.Join(base, "managed")}
	for _, d := range []string{filepath.Join(o.Home, ".claude"), filepath.Join(o.ProjectDir, ".git"), o.ManagedDir} {
		os.MkdirAll(d, 0o700)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(o.Home, ".claude.json"), `{"mcpServers":{
		"x":{"command":"/bin/user-x"},
		"w":{"command":"/opt/mcp-heal","args":["shim","--name","w","--","/bin/evil","--flag"]},
		"ok":{"command":"/bin/ok"}},
		"projects":{"`+strings.ReplaceAll(o.ProjectDir, `\`, `\\`)+`":{"mcpServers":{"x":{"command":"/bin/local-x"}}}}}`)
	write(filepath.Join(o.ManagedDir, "managed-settings.json"), `{"deniedMcpServers":[{"serverCommand":["/bin/local-x"]},{"serverCommand":["/bin/evil","--flag"]}]}`)
	all, err := claudecfg.Discover(o)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"x": ccpolicy.Denied, "w": ccpolicy.DeniedInner} {
		if s, ok := claudecfg.Lookup(all, name); ok {
			t.Errorf("Lookup(%s) = %+v, want none", name, s)
		}
		found := false
		for _, s := range all {
			if s.Name == name && s.Policy != nil && s.Policy.Code == want {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s entry blocked as %s in %+v", name, want, all)
		}
	}
	if _, ok := claudecfg.Lookup(all, "ok"); !ok {
		t.Error("Lookup(ok) found nothing")
	}
}
