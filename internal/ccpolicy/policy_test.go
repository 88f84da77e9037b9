package ccpolicy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestDecide: each source of Claude Code's MCP policy, as measured with
// Claude Code 2.1.328 and 2.1.332 (`claude mcp list`, TestPolicyMatchesClaude
// checks them against the real thing): deny rules by name, command and
// URL from the managed file, a drop-in, user, project and local settings;
// allowlists that add up across sources unless the managed settings say
// allowManagedMcpServersOnly; an empty allowlist; an exclusive
// managed-mcp.json; ${VAR} in a URL rule or entry.
func TestDecide(t *testing.T) {
	x := ccpolicy.Entry{Name: "x", Command: "/bin/srv", Args: []string{"--a", "b"}}
	remote := ccpolicy.Entry{Name: "r", URL: "https://mcp.example.com/v1/mcp"}
	remoteVar := ccpolicy.Entry{Name: "r", URL: "https://mcp.example.com/${MCP_PATH}/mcp"}
	for _, tt := range []struct {
		name  string
		files map[string]string // relative to the base: managed/, home/, proj/
		e     ccpolicy.Entry
		want  string
	}{
		{"nothing", nil, x, ccpolicy.Runs},
		{"user deny name", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.Denied},
		{"user deny command", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverCommand":["/bin/srv","--a","b"]}]}`}, x, ccpolicy.Denied},
		{"deny command needs every arg", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverCommand":["/bin/srv","--a"]}]}`}, x, ccpolicy.Runs},
		{"deny url pattern", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverUrl":"https://*.example.com/*"}]}`}, remote, ccpolicy.Denied},
		{"deny url other host", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverUrl":"https://*.example.org/*"}]}`}, remote, ccpolicy.Runs},
		{"deny url rule var", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverUrl":"https://mcp.example.com/${MCP_PATH}/*"}]}`}, remote, ccpolicy.Denied},
		{"deny url entry var", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverUrl":"https://mcp.example.com/v1/*"}]}`}, remoteVar, ccpolicy.Denied},
		{"deny url rule default", map[string]string{"home/.claude/settings.json": `{"deniedMcpServers":[{"serverUrl":"https://mcp.example.com/${UNSET:-v1}/mcp"}]}`}, remote, ccpolicy.Denied},
		{"allow url rule var", map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverUrl":"https://mcp.example.com/${MCP_PATH}/mcp"}]}`}, remote, ccpolicy.Runs},
		{"allow url entry var", map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverUrl":"https://mcp.example.com/v1/mcp"}]}`}, remoteVar, ccpolicy.Runs},
		{"project deny", map[string]string{"proj/.claude/settings.json": `{"deniedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.Denied},
		{"local deny", map[string]string{"proj/.claude/settings.local.json": `{"deniedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.Denied},
		{"managed deny", map[string]string{"managed/managed-settings.json": `{"deniedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.Denied},
		{"drop-in deny", map[string]string{"managed/managed-settings.d/10-mcp.json": `{"deniedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.Denied},
		{"user allows another", map[string]string{"home/.claude/settings.json": `{"allowedMcpServers":[{"serverName":"y"}]}`}, x, ccpolicy.NotAllowed},
		{"empty allowlist", map[string]string{"home/.claude/settings.json": `{"allowedMcpServers":[]}`}, x, ccpolicy.NotAllowed},
		{"allowlists add up", map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverName":"y"}]}`, "home/.claude/settings.json": `{"allowedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.Runs},
		{"managed allowlist only", map[string]string{"managed/managed-settings.json": `{"allowManagedMcpServersOnly":true,"allowedMcpServers":[{"serverName":"y"}]}`, "home/.claude/settings.json": `{"allowedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.NotAllowed},
		{"allow by name, commands listed", map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverName":"x"},{"serverCommand":["other"]}]}`}, x, ccpolicy.NotAllowed},
		{"allow by command", map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverCommand":["/bin/srv","--a","b"]}]}`}, x, ccpolicy.Runs},
		{"deny beats allow", map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverName":"x"}],"deniedMcpServers":[{"serverName":"x"}]}`}, x, ccpolicy.Denied},
		{"exclusive managed-mcp.json", map[string]string{"managed/managed-mcp.json": `{"mcpServers":{}}`}, x, ccpolicy.ManagedOnly},
		{"broken managed-mcp.json still exclusive", map[string]string{"managed/managed-mcp.json": `{`}, x, ccpolicy.ManagedOnly},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := setup(t, tt.files)
			// ${VAR} in a URL rule or entry is expanded first, as in a
			// command ("deny url - rule var" ... in TestPolicyMatchesClaude).
			o.Getenv = func(k string) string { return map[string]string{"MCP_PATH": "v1"}[k] }
			if got := ccpolicy.Load(o).Decide(tt.e); got.Code != tt.want || (got.Code != "" && got.Why == "") {
				t.Errorf("got %+v, want %q", got, tt.want)
			}
		})
	}
}

// TestApprovalOwnTrust: a .mcp.json server is approved only by the
// folder's own trust record, not a parent's (Claude Code 2.1.328 and
// 2.1.332 keep ~/code/clone's servers pending when ~/code is trusted).
func TestApprovalOwnTrust(t *testing.T) {
	for _, tt := range []struct{ name, projects, want string }{
		{"parent trusted", `{"@BASE@":{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true}}`, ccpolicy.Pending},
		{"own trusted", `{"@PROJ@":{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true}}`, ccpolicy.Approved},
		{"own trusted, rejected", `{"@PROJ@":{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true,"disabledMcpjsonServers":["x"]}}`, ccpolicy.Rejected},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := setup(t, nil)
			base := filepath.Dir(o.ProjectDir)
			// JSON escapes a Windows path's backslashes.
			esc := func(p string) string { return strings.ReplaceAll(p, `\`, `\\`) }
			p := replace(tt.projects, "@BASE@", esc(base), "@PROJ@", esc(o.ProjectDir))
			write(t, filepath.Join(o.Home, ".claude.json"), `{"projects":`+p+`}`)
			if got := ccpolicy.Load(o).Approval("x"); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSource(t *testing.T) {
	for src, ours := range map[string]bool{"": true, "user": true, "local": true, "project": true, "dynamic": false, "plugin": false, "managed": false, "claudeai": false} {
		if d, ok := ccpolicy.Source(src); ok != ours || (!ok && d.Code != ccpolicy.NotOurs) {
			t.Errorf("Source(%q) = %+v, %v; want ours %v", src, d, ok, ours)
		}
	}
}

// TestWraps: under an allowlist of commands, the wrapped form of an entry
// is refused unless the organisation listed it; by name, it passes.
func TestWraps(t *testing.T) {
	o := setup(t, map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverCommand":["/bin/srv"]}]}`})
	if why := ccpolicy.Load(o).Wraps("x", nil); why == "" {
		t.Error("an allowlist of commands admits a wrapped entry")
	}
	o = setup(t, map[string]string{"managed/managed-settings.json": `{"allowedMcpServers":[{"serverName":"x"}]}`})
	if why := ccpolicy.Load(o).Wraps("x", nil); why != "" {
		t.Errorf("an allowlist by name refuses the wrapped entry: %s", why)
	}
}

func setup(t *testing.T, files map[string]string) ccpolicy.Options {
	base, _ := filepath.EvalSymlinks(testenv.TempDir(t))
	o := ccpolicy.Options{Home: filepath.Join(base, "home"), ProjectDir: filepath.Join(base, "proj"), ManagedDir: filepath.Join(base, "managed")}
	for _, d := range []string{o.Home, filepath.Join(o.ProjectDir, ".git"), o.ManagedDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for rel, content := range files {
		write(t, filepath.Join(base, rel), content)
	}
	return o
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func replace(s string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(s)
}
