package wrap

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestRejectedAfterWrap: the user approved a project server, wrap protected
// it with a local copy, then the user rejected it. Claude Code runs local
// entries unasked, so the copy would keep running what the user rejected:
// Discover marks the copy unapproved (it shadows nothing, Lookup skips it)
// and its Drift says to unwrap it.
func TestRejectedAfterWrap(t *testing.T) {
	cfgtest.StateHome(t) // Commit keeps a backup there
	base := testenv.TempDir(t)
	home, repo := filepath.Join(base, "home"), filepath.Join(base, "clone")
	cfgtest.Write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	repo, _ = filepath.EvalSymlinks(repo)
	mcp := filepath.Join(repo, ".mcp.json")
	cfgtest.Write(t, mcp, `{"mcpServers": {"github": {"command": "the-repositorys"}}}`)
	global := filepath.Join(home, ".claude.json")
	cfgtest.Write(t, global, `{"mcpServers": {"github": {"command": "users-own"}}, "projects": {"`+cfgtest.JSON(repo)+`": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["github"]}}}`)
	o := claudecfg.Options{Home: home, ProjectDir: repo}
	plan, err := NewPlan(o, Request{Names: []string{"github"}, Scope: claudecfg.ScopeProject, Shim: "/opt/mcp-heal"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Commit(); err != nil {
		t.Fatal(err)
	}
	all, _ := claudecfg.Discover(o)
	if s, ok := claudecfg.Lookup(all, "github"); !ok || s.Scope != claudecfg.ScopeLocal || s.Protects != mcp {
		t.Fatalf("after wrap, Lookup = %+v, %v; want the local copy", s, ok)
	}
	// The user rejects it (Claude Code writes the list to the project's
	// settings.local.json).
	cfgtest.Write(t, filepath.Join(repo, ".claude", "settings.local.json"), `{"disabledMcpjsonServers": ["github"]}`)
	all, _ = claudecfg.Discover(o)
	copy := all[0]
	if copy.Scope != claudecfg.ScopeLocal || copy.Approval != claudecfg.Rejected || !strings.HasPrefix(copy.Drift, claudecfg.DriftUnapproved) {
		t.Fatalf("the copy after the rejection: %+v", copy)
	}
	if s, ok := claudecfg.Lookup(all, "github"); !ok || s.Command != "users-own" {
		t.Fatalf("Lookup = %+v, %v; want the user's own", s, ok)
	}
}
