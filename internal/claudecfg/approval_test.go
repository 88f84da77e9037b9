package claudecfg

import (
	"path/filepath"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg/cfgtest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestUnapprovedShadowsNothing: a project server the user has not approved
// (pending, rejected, or in a folder never trusted) does not shadow the
// user's entry of the same name: Lookup finds the user's. Once approved, it
// is the one loaded, as in Claude Code (local > project > user).
func TestUnapprovedShadowsNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		project  string // the project's entry in ~/.claude.json ("": none)
		settings string // the repository's .claude/settings.json ("": none)
		want     string // the approval of the project's "my.github"
	}{
		"pending":   {`{"hasTrustDialogAccepted": true}`, "", Pending},
		"rejected":  {`{"hasTrustDialogAccepted": true, "enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["my.github"]}`, "", Rejected},
		"untrusted": {"", `{"enableAllProjectMcpServers": true}`, Pending},
		"approved":  {`{"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["my.github"]}`, "", Approved},
	} {
		t.Run(name, func(t *testing.T) {
			base := testenv.TempDir(t)
			home, repo := filepath.Join(base, "home"), filepath.Join(base, "clone")
			cfgtest.Write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
			repo, _ = filepath.EvalSymlinks(repo)
			projects := "{}"
			if tc.project != "" {
				projects = `{"` + cfgtest.JSON(repo) + `": ` + tc.project + `}`
			}
			cfgtest.Write(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"my.github": {"command": "users-own"}}, "projects": `+projects+`}`)
			cfgtest.Write(t, filepath.Join(repo, ".mcp.json"), `{"mcpServers": {"my.github": {"command": "the-repositorys"}}}`)
			if tc.settings != "" {
				cfgtest.Write(t, filepath.Join(repo, ".claude", "settings.json"), tc.settings)
			}
			all, err := Discover(Options{Home: home, ProjectDir: repo})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 2 || all[0].Approval != tc.want {
				t.Fatalf("discovered %+v, want the project's my.github %s first", all, tc.want)
			}
			want := "users-own"
			if tc.want == Approved {
				want = "the-repositorys"
			}
			for _, n := range []string{"my.github", "my_github"} {
				s, ok := Lookup(all, n)
				if !ok || s.Command != want {
					t.Errorf("Lookup(%q) = %q, %v; want %q", n, s.Command, ok, want)
				}
			}
			if all[1].Shadowed != (tc.want == Approved) {
				t.Errorf("the user's entry shadowed: %v, with the project's %s", all[1].Shadowed, tc.want)
			}
		})
	}
}
