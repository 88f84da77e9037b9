package ccpolicy_test

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
)

// TestShadowed: the merge rules Claude Code 2.1.328 and 2.1.332 apply
// (TestPolicyMatchesClaude checks them against the real thing): the
// first entry of a name runs, an unapproved project entry takes no name,
// a blocked one does; a plugin's server is dropped when an entry Claude
// Code loads has its command and arguments, or URL.
func TestShadowed(t *testing.T) {
	cmd := ccpolicy.Entry{Command: "srv", Args: []string{"a"}}
	url := ccpolicy.Entry{URL: "https://h/mcp"}
	for _, tt := range []struct {
		name string
		es   []ccpolicy.Merged
		want []bool
	}{
		{"first of a name runs", []ccpolicy.Merged{{Name: "x"}, {Name: "x"}, {Name: "y"}}, []bool{false, true, false}},
		{"unapproved takes no name", []ccpolicy.Merged{{Name: "x", Unapproved: true}, {Name: "x"}}, []bool{false, false}},
		{"blocked takes its name", []ccpolicy.Merged{{Name: "x", Blocked: true}, {Name: "x"}}, []bool{false, true}},
		{"plugin same command", []ccpolicy.Merged{{Name: "x", Target: cmd}, {Name: "plugin:p:x", Target: cmd, Plugin: true}}, []bool{false, true}},
		{"plugin other args", []ccpolicy.Merged{{Name: "x", Target: cmd}, {Name: "plugin:p:x", Target: ccpolicy.Entry{Command: "srv"}, Plugin: true}}, []bool{false, false}},
		{"plugin same url", []ccpolicy.Merged{{Name: "x", Target: url}, {Name: "plugin:p:y", Target: url, Plugin: true}}, []bool{false, true}},
		{"plugin, entry blocked", []ccpolicy.Merged{{Name: "x", Target: cmd, Blocked: true}, {Name: "plugin:p:x", Target: cmd, Plugin: true}}, []bool{false, false}},
		{"plugin, entry shadowed", []ccpolicy.Merged{{Name: "x"}, {Name: "x", Target: cmd}, {Name: "plugin:p:x", Target: cmd, Plugin: true}}, []bool{false, true, false}},
		{"plugin, entry unapproved", []ccpolicy.Merged{{Name: "x", Target: cmd, Unapproved: true}, {Name: "plugin:p:x", Target: cmd, Plugin: true}}, []bool{false, false}},
		{"plugins do not shadow by name", []ccpolicy.Merged{{Name: "plugin:p:x", Plugin: true, Target: cmd}, {Name: "plugin:p:x", Plugin: true, Target: cmd}}, []bool{false, false}},
	} {
		if got := ccpolicy.Shadowed(tt.es); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// countingReader counts what Load reads through Options.Files.
type countingReader struct {
	ccpolicy.Reader
	seen []string
}

func (c *countingReader) Config(p string) ([]byte, bool) {
	c.seen = append(c.seen, "config "+filepath.Base(p))
	return c.Reader.Config(p)
}

func (c *countingReader) Stat(p string) (fs.FileInfo, error) {
	c.seen = append(c.seen, "stat "+filepath.Base(p))
	return c.Reader.Stat(p)
}

func (c *countingReader) ReadDir(p string) ([]fs.DirEntry, error) {
	c.seen = append(c.seen, "readdir "+filepath.Base(p))
	return c.Reader.ReadDir(p)
}

// TestLoadReadsThroughFiles: the managed files, the drop-ins, the git
// root and the settings are all read through Options.Files, so a broken
// managed-mcp.json (present, not JSON) is found by its Stat.
func TestLoadReadsThroughFiles(t *testing.T) {
	o := setup(t, map[string]string{"managed/managed-mcp.json": `{`, "managed/managed-settings.d/10.json": `{}`})
	c := &countingReader{Reader: ccpolicy.OS}
	o.Files = c
	if d := ccpolicy.Load(o).Decide(ccpolicy.Entry{Name: "x", Command: "x"}); d.Code != ccpolicy.ManagedOnly {
		t.Errorf("got %+v, want managed-only", d)
	}
	for _, want := range []string{"config managed-mcp.json", "stat managed-mcp.json", "readdir managed-settings.d", "config 10.json", "stat .git", "config settings.json"} {
		if !slices.Contains(c.seen, want) {
			t.Errorf("Load did not read %q through Options.Files; it read %q", want, c.seen)
		}
	}
}

// TestFromEnv: the project is the flag, else $CLAUDE_PROJECT_DIR, else
// the hook's cwd; home and config folder from the environment.
func TestFromEnv(t *testing.T) {
	env := map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c", "CLAUDE_PROJECT_DIR": "/p"}
	get := func(k string) string { return env[k] }
	for _, tt := range []struct{ flag, cwd, want string }{{"/f", "/w", "/f"}, {"", "/w", "/p"}} {
		o, err := ccpolicy.FromEnv(get, tt.flag, tt.cwd)
		if want, _ := filepath.Abs(tt.want); err != nil || o.ProjectDir != want || o.Home != "/h" || o.ConfigDir != "/c" {
			t.Errorf("FromEnv(%q, %q) = %+v, %v", tt.flag, tt.cwd, o, err)
		}
	}
	delete(env, "CLAUDE_PROJECT_DIR")
	if o, _ := ccpolicy.FromEnv(get, "", "/w"); o.ProjectDir != abs("/w") {
		t.Errorf("without CLAUDE_PROJECT_DIR the project is the hook's cwd: got %q", o.ProjectDir)
	}
}

func abs(p string) string {
	a, _ := filepath.Abs(p)
	return a
}

// TestTwin: an entry whose command a plugin's server has keeps that
// server from running only while it runs the command itself (Claude Code
// 2.1.328 and 2.1.332 ran both after wrap --all): wrap leaves it alone.
func TestTwin(t *testing.T) {
	cmd := ccpolicy.Entry{Command: "srv", Args: []string{"a"}}
	es := []ccpolicy.Merged{
		{Name: "x", Target: cmd},
		{Name: "y", Target: ccpolicy.Entry{Command: "other"}},
		{Name: "z", Target: cmd, Blocked: true},
		{Name: "plugin:p:x", Target: cmd, Plugin: true},
	}
	for i, want := range []string{"plugin:p:x", "", "", ""} {
		if got := ccpolicy.Twin(es, i); got != want {
			t.Errorf("Twin(%s) = %q, want %q", es[i].Name, got, want)
		}
	}
	if why := ccpolicy.TwinWhy("plugin:p:x"); !strings.Contains(why, "plugin:p:x") {
		t.Errorf("TwinWhy does not name the plugin's server: %s", why)
	}
}
