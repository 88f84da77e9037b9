package claudecfg

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// fixture lays out a home and a git project (with a sub-directory and a
// .mcp.json above the repository) the way Claude Code 2.1.328 writes them.
func fixture(t *testing.T) (home, repo string) {
	t.Helper()
	base := testenv.TempDir(t)
	home, repo = filepath.Join(base, "home"), filepath.Join(base, "work", "repö")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	cfgtest.Write(t, filepath.Join(home, ".claude.json"), `{
  "numStartups": 3,
  "mcpServers": {
    "shared": {"type": "stdio", "command": "user-shared", "args": [], "env": {"TOKEN": "s3cret"}},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer abc"}},
    "wrapped-remote": {"type": "stdio", "command": "/x/mcp-heal", "args": ["shim", "--name", "wrapped-remote", "--url", "https://r/mcp", "--transport", "http", "--header", "Authorization: ${MCP_HEAL_HEADER_AUTHORIZATION}"], "env": {"MCP_HEAL_HEADER_AUTHORIZATION": "Bearer xyz", "OTHER": "1"}, "mcpHeal": {"original": {"type": "http", "url": "https://r/mcp", "headers": {"Authorization": "Bearer xyz"}}}}
  },
  "projects": {
    "/somewhere/else": {"mcpServers": {"elsewhere": {"command": "nope"}}},
    "`+cfgtest.JSON(repo)+`": {
      "mcpServers": {
        "shared": {"command": "local-shared"},
        "wrapped": {"command": "/x/mcp-heal", "args": ["shim", "--name", "wrapped", "--", "real", "-v"], "mcpHeal": {"original": {"command": "real", "args": ["-v"]}}}
      },
      "hasTrustDialogAccepted": true,
      "enabledMcpjsonServers": ["proj"],
      "disabledMcpjsonServers": ["nope"]
    }
  }
}`)
	cfgtest.Write(t, filepath.Join(repo, ".mcp.json"), `{"mcpServers": {"proj": {"command": "p"}, "shared": {"command": "project-shared"}, "nope": {"command": "n"}}}`)
	cfgtest.Write(t, filepath.Join(filepath.Dir(repo), ".mcp.json"), `{"mcpServers": {"parent": {"type": "sse", "url": "http://h/sse"}}}`)
	// Plugins: one enabled (servers in .mcp.json), one enabled for this
	// project with servers in plugin.json, one disabled, one installed for
	// another project.
	pl := filepath.Join(home, ".claude", "plugins")
	cache := filepath.Join(pl, "cache", "mk")
	cfgtest.Write(t, filepath.Join(pl, "installed_plugins.json"), `{"version": 2, "plugins": {
  "pa@mk": [{"scope": "user", "installPath": "`+cfgtest.JSON(cache)+`/pa/1.0.0", "version": "1.0.0"}],
  "pb@mk": [{"scope": "project", "installPath": "`+cfgtest.JSON(cache)+`/pb/2.0.0", "projectPath": "`+cfgtest.JSON(repo)+`"}],
  "pc@mk": [{"scope": "user", "installPath": "`+cfgtest.JSON(cache)+`/pc/1.0.0"}],
  "pd@mk": [{"scope": "local", "installPath": "`+cfgtest.JSON(cache)+`/pd/1.0.0", "projectPath": "/other"}]
}}`)
	cfgtest.Write(t, filepath.Join(cache, "pa", "1.0.0", ".claude-plugin", "plugin.json"), `{"name": "pa"}`)
	cfgtest.Write(t, filepath.Join(cache, "pa", "1.0.0", ".mcp.json"), `{"mcpServers": {"srva": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/srv", "args": ["${CLAUDE_PLUGIN_ROOT}/cfg"]}, "dup": {"command": "local-shared"}}}`)
	cfgtest.Write(t, filepath.Join(cache, "pb", "2.0.0", ".claude-plugin", "plugin.json"), `{"name": "pb", "mcpServers": {"srvb": {"type": "http", "url": "http://b/mcp"}}}`)
	cfgtest.Write(t, filepath.Join(cache, "pc", "1.0.0", ".mcp.json"), `{"mcpServers": {"srvc": {"command": "c"}}}`)
	cfgtest.Write(t, filepath.Join(cache, "pd", "1.0.0", ".mcp.json"), `{"mcpServers": {"srvd": {"command": "d"}}}`)
	cfgtest.Write(t, filepath.Join(home, ".claude", "settings.json"), `{"enabledPlugins": {"pa@mk": true, "pc@mk": true, "pd@mk": true}}`)
	cfgtest.Write(t, filepath.Join(repo, ".claude", "settings.json"), `{"enabledPlugins": {"pb@mk": true}}`)
	cfgtest.Write(t, filepath.Join(repo, ".claude", "settings.local.json"), `{"enabledPlugins": {"pc@mk": false}}`)
	return home, repo
}

type row struct {
	Name, Scope, Transport, Command, URL string
	Args                                 []string
	Wrapped, Shadowed                    bool
	Approval                             string
}

func TestDiscover(t *testing.T) {
	home, repo := fixture(t)
	sub := filepath.Join(repo, "src")
	os.MkdirAll(sub, 0o755)
	// Through a symlink to a sub-directory, as a user's shell might be.
	link := filepath.Join(testenv.TempDir(t), "link")
	if why := testenv.TrySymlink(t, sub, link); why != "" {
		t.Logf("the project dir given directly, not through a link: %s", why)
		link = sub
	}
	servers, err := Discover(Options{Home: home, ProjectDir: link})
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(home, ".claude", "plugins", "cache", "mk")
	want := []row{
		{Name: "shared", Scope: "local", Transport: "stdio", Command: "local-shared"},
		{Name: "wrapped", Scope: "local", Transport: "stdio", Command: "real", Args: []string{"-v"}, Wrapped: true},
		{Name: "proj", Scope: "project", Transport: "stdio", Command: "p", Approval: "approved"},
		{Name: "shared", Scope: "project", Transport: "stdio", Command: "project-shared", Shadowed: true, Approval: "pending"},
		{Name: "nope", Scope: "project", Transport: "stdio", Command: "n", Approval: "rejected"},
		{Name: "parent", Scope: "project", Transport: "sse", URL: "http://h/sse", Approval: "pending"},
		{Name: "shared", Scope: "user", Transport: "stdio", Command: "user-shared", Shadowed: true},
		{Name: "remote", Scope: "user", Transport: "http", URL: "https://mcp.example.com/mcp"},
		{Name: "wrapped-remote", Scope: "user", Transport: "http", URL: "https://r/mcp", Wrapped: true},
		{Name: "plugin:pa:srva", Scope: "plugin", Transport: "stdio", Command: cache + "/pa/1.0.0/bin/srv", Args: []string{cache + "/pa/1.0.0/cfg"}},
		{Name: "plugin:pa:dup", Scope: "plugin", Transport: "stdio", Command: "local-shared", Shadowed: true},
		{Name: "plugin:pb:srvb", Scope: "plugin", Transport: "http", URL: "http://b/mcp"},
	}
	var got []row
	for _, s := range servers {
		got = append(got, row{s.Name, s.Scope, s.Transport, s.Command, s.URL, s.Args, s.Wrapped, s.Shadowed, s.Approval})
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
	for _, s := range servers {
		switch s.Name {
		case "wrapped-remote":
			if s.Headers["Authorization"] != "Bearer xyz" || !reflect.DeepEqual(s.EnvKeys, []string{"OTHER"}) {
				t.Fatalf("wrapped remote: headers %v env keys %v", s.Headers, s.EnvKeys)
			}
		case "remote":
			if s.File != filepath.Join(home, ".claude.json") || !reflect.DeepEqual(s.JSONPath, []string{"mcpServers"}) {
				t.Fatalf("remote: file %s path %q", s.File, s.JSONPath)
			}
		case "wrapped":
			if !reflect.DeepEqual(s.JSONPath, []string{"projects", repo, "mcpServers"}) {
				t.Fatalf("local: path %q", s.JSONPath)
			}
		}
	}
}

func TestDiscoverReportsBrokenFileAndKeepsTheRest(t *testing.T) {
	home, repo := fixture(t)
	cfgtest.Write(t, filepath.Join(repo, ".mcp.json"), "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}")
	servers, err := Discover(Options{Home: home, ProjectDir: repo})
	if err == nil || err.Error() != filepath.Join(repo, ".mcp.json")+":3:26: invalid JSON: invalid character '}' looking for beginning of object key string" {
		t.Fatalf("got error %v", err)
	}
	if len(servers) < 5 {
		t.Fatalf("got %d servers, want the other files' servers", len(servers))
	}
}

func TestDiscoverProjectServersPendingUntilTrusted(t *testing.T) {
	home, repo := fixture(t)
	cfgtest.Write(t, filepath.Join(home, ".claude.json"), `{"projects": {"`+cfgtest.JSON(repo)+`": {"hasTrustDialogAccepted": false}}}`)
	cfgtest.Write(t, filepath.Join(repo, ".claude", "settings.local.json"), `{"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["nope"]}`)
	servers, _ := Discover(Options{Home: home, ProjectDir: repo})
	got := map[string]string{}
	for _, s := range servers {
		if s.Scope == ScopeProject {
			got[s.Name] = s.Approval
		}
	}
	want := map[string]string{"proj": "pending", "shared": "pending", "nope": "rejected", "parent": "pending"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestDiscoverEmptyHome(t *testing.T) {
	servers, err := Discover(Options{Home: testenv.TempDir(t), ProjectDir: testenv.TempDir(t)})
	if err != nil || len(servers) != 0 {
		t.Fatalf("got %v %v", servers, err)
	}
}

// BenchmarkDiscoverLargeConfig: hooks call Discover (SessionStart, failure
// handling), so it must stay cheap on a ~/.claude.json with hundreds of
// projects.
func BenchmarkDiscoverLargeConfig(b *testing.B) {
	home := b.TempDir()
	data, projects := cfgtest.GenConfig(7, 500, "  ")
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), data, 0o600); err != nil {
		b.Fatal(err)
	}
	o := Options{Home: home, ProjectDir: projects[len(projects)/2]}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Discover(o); err != nil {
			b.Fatal(err)
		}
	}
}
