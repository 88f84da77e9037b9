package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adrg/xdg"
)

// cfgEnv is a throwaway home and project for the config commands, with
// XDG_STATE_HOME (backups, shim records, incidents) pointed inside it.
type cfgEnv struct {
	t                *testing.T
	home, proj, dots string
	vars             map[string]string
}

func newCfgEnv(t *testing.T) *cfgEnv {
	t.Helper()
	base := t.TempDir()
	c := &cfgEnv{t: t, home: filepath.Join(base, "home"), proj: filepath.Join(base, "wörk", "proj"), dots: filepath.Join(base, "dotfiles")}
	for _, d := range []string{c.home, c.proj, c.dots} {
		os.MkdirAll(d, 0o755)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	xdg.Reload()
	t.Cleanup(xdg.Reload)
	c.vars = map[string]string{"HOME": c.home, "CLAUDE_PROJECT_DIR": c.proj, "XDG_DATA_HOME": filepath.Join(base, "data")}
	// ~/.claude.json is a symlink into a dotfiles folder, mode 0600.
	global := filepath.Join(c.dots, "claude.json")
	c.write(global, `{
  "numStartups": 12,
  "mcpServers": {
    "mem": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-memory",
        "--api-key=sk-live-abcdef1234567890"
      ],
      "env": {
        "MEMORY_FILE": "/tmp/m.json"
      }
    },
    "api": {
      "type": "http",
      "url": "https://mcp.example.com/mcp",
      "headers": {
        "Authorization": "Bearer very-secret"
      }
    }
  },
  "projects": {
    "`+c.proj+`": {
      "allowedTools": [],
      "mcpServers": {
        "local-one": {
          "type": "stdio",
          "command": "/usr/local/bin/thing",
          "args": [],
          "env": {}
        }
      },
      "hasTrustDialogAccepted": true
    }
  }
}
`, 0o600)
	if err := os.Symlink(global, filepath.Join(c.home, ".claude.json")); err != nil {
		t.Fatal(err)
	}
	c.write(filepath.Join(c.proj, ".mcp.json"), "{\n  \"mcpServers\": {\n    \"proj-srv\": {\n      \"command\": \"python3\",\n      \"args\": [\"-m\", \"srv\"]\n    }\n  }\n}\n", 0o644)
	return c
}

func (c *cfgEnv) write(path, data string, mode os.FileMode) {
	c.t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cfgEnv) run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return c.vars[k] }}
	code = run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// snapshot reads every config file.
func (c *cfgEnv) snapshot() map[string]string {
	m := map[string]string{}
	for _, p := range []string{filepath.Join(c.dots, "claude.json"), filepath.Join(c.proj, ".mcp.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			c.t.Fatal(err)
		}
		m[p] = string(b)
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestWrapUnwrapCommands(t *testing.T) {
	c := newCfgEnv(t)
	orig := c.snapshot()

	code, out, errs := c.run("wrap", "--all", "--dry-run", "--shim", "/opt/mh/mcp-heal")
	if code != 0 || !strings.Contains(out, "--- ~/.claude.json") || !strings.Contains(out, "+      \"command\": \"/opt/mh/mcp-heal\",") || !strings.Contains(out, "dry run: nothing was written") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Fatal("--dry-run changed a file")
	}
	if strings.Contains(out, "very-secret\"\n+      \"args\"") {
		t.Fatal("secret in args")
	}

	code, out, errs = c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	for _, want := range []string{"local-one: wrapped (local, ~/.claude.json)", "proj-srv: wrapped (project, " + filepath.Join(c.proj, ".mcp.json") + ")", "mem: wrapped (user", "api: wrapped (user", "Restart Claude Code", "Note: .mcp.json is usually shared"} {
		if !strings.Contains(out, want) {
			t.Fatalf("wrap: exit %d, output lacks %q:\n%s\n%s", code, want, out, errs)
		}
	}
	if !strings.Contains(errs, "backup of ~/.claude.json: ") {
		t.Fatalf("no backup named: %s", errs)
	}
	wrapped := c.snapshot()
	if fi, err := os.Lstat(filepath.Join(c.home, ".claude.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("~/.claude.json is no longer a symlink")
	}
	if fi, _ := os.Stat(filepath.Join(c.dots, "claude.json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(c.dots); len(ents) != 1 {
		t.Fatalf("temp files left: %v", ents)
	}

	// Twice = once.
	code, out, _ = c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	if code != 0 || strings.Contains(out, ": wrapped") || !equalMaps(c.snapshot(), wrapped) {
		t.Fatalf("second wrap: exit %d\n%s", code, out)
	}

	// status sees them wrapped, with no secret in sight.
	code, out, _ = c.run("status")
	if code != 0 || strings.Contains(out, "very-secret") || strings.Contains(out, "/tmp/m.json") || strings.Contains(out, "abcdef1234567890") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	for _, n := range []string{"mem", "api", "local-one", "proj-srv"} {
		if !regexpMatch(`(?m)^`+n+` +\S+ +\S+ +yes `, out) {
			t.Fatalf("status does not show %s wrapped:\n%s", n, out)
		}
	}

	code, out, errs = c.run("unwrap", "--all")
	if code != 0 || !strings.Contains(out, "mem: unwrapped") {
		t.Fatalf("unwrap: exit %d\n%s\n%s", code, out, errs)
	}
	if got := c.snapshot(); !equalMaps(got, orig) {
		t.Fatalf("unwrap did not restore the files byte for byte:\n%v\n%v", got, orig)
	}
}

func TestWrapScopeAndNames(t *testing.T) {
	c := newCfgEnv(t)
	code, out, errs := c.run("wrap", "--scope", "user", "mem", "--shim", "/opt/mh/mcp-heal")
	if code != 0 || !strings.Contains(out, "mem: wrapped (user") || strings.Contains(out, "api") || strings.Contains(out, "local-one") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = c.run("unwrap", "--scope", "project", "--all")
	if code != 0 || !strings.Contains(out, "proj-srv: not wrapped") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestWrapUsageErrors(t *testing.T) {
	c := newCfgEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"wrap"}, 2, "no servers named"},
		{[]string{"wrap", "--all", "mem"}, 2, "not both"},
		{[]string{"wrap", "--scope", "global", "--all"}, 2, `unknown scope "global"`},
		{[]string{"wrap", "--shim", "/opt/mh/mcp-heal", "nosuch"}, 2, `no server named "nosuch"`},
		{[]string{"unwrap", "plugin:x:y"}, 2, "plugin-provided servers cannot be wrapped"},
	} {
		orig := c.snapshot()
		code, out, errs := c.run(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", tc.args, code, tc.code, tc.want, out, errs)
		}
		if !equalMaps(c.snapshot(), orig) {
			t.Errorf("%v changed a file", tc.args)
		}
	}
	// The test binary, like `go run`, lives in a temporary go-build
	// directory: wrap will not point entries at it.
	if code, _, errs := c.run("wrap", "--all"); code != 2 || !strings.Contains(errs, "temporary 'go run' build") {
		t.Errorf("wrap without --shim from a go-build binary: exit %d\n%s", code, errs)
	}
	// A preview without names shows every server and writes nothing.
	orig := c.snapshot()
	if code, out, errs := c.run("wrap", "--dry-run", "--shim", "/opt/mh/mcp-heal"); code != 0 || !strings.Contains(out, "/opt/mh/mcp-heal") {
		t.Errorf("wrap --dry-run without names: exit %d\n%s%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Errorf("wrap --dry-run changed a file")
	}
	code, out, _ := c.run("wrap", "--help")
	if code != 0 || !strings.Contains(out, "Usage: mcp-heal wrap") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func TestWrapRefusesBrokenConfig(t *testing.T) {
	c := newCfgEnv(t)
	bad := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}\n"
	mcpJSON := filepath.Join(c.proj, ".mcp.json")
	c.write(mcpJSON, bad, 0o644)
	orig := c.snapshot()
	code, out, errs := c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	if code != 1 || !strings.Contains(errs, mcpJSON+":4:5: invalid JSON") || !strings.Contains(errs, "nothing was changed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Fatal("a file changed although one config was broken")
	}
}
