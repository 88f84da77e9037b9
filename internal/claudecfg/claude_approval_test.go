//go:build unix

package claudecfg_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestApprovalMatchesClaude: for a cloned repository whose .mcp.json
// "github" shares its name with the user's own, the entry claudecfg.Lookup
// picks is the one `claude mcp list` runs, in every approval state: the
// user's while the repository's is rejected, pending, or in a folder never
// trusted (its own settings asking to enable every project server), the
// repository's once approved. Claude Code never runs an unapproved one
// either (its marker stays absent).
func TestApprovalMatchesClaude(t *testing.T) {
	claude := testenv.NPMBin(t, "claude", testenv.ClaudeCode)
	heal := testenv.Binary(t)
	for name, tc := range map[string]struct {
		project, settings string
		repoRuns          bool
	}{
		"rejected":  {`{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true,"disabledMcpjsonServers":["github"]}`, "", false},
		"pending":   {`{"hasTrustDialogAccepted":true}`, "", false},
		"untrusted": {"", `{"enableAllProjectMcpServers":true}`, false},
		"approved":  {`{"hasTrustDialogAccepted":true,"enabledMcpjsonServers":["github"]}`, "", true},
	} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			c := &claudeEnv{t: t, claude: claude, heal: heal, home: filepath.Join(base, "home"), proj: filepath.Join(base, "clone")}
			for _, d := range []string{c.home, filepath.Join(c.proj, ".git"), filepath.Join(c.proj, ".claude")} {
				os.MkdirAll(d, 0o700)
			}
			c.proj, _ = filepath.EvalSymlinks(c.proj)
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "CLAUDE_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
					c.env = append(c.env, kv)
				}
			}
			c.env = append(c.env, "HOME="+c.home, "XDG_STATE_HOME="+filepath.Join(base, "state"),
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1")
			repoMark, userMark := filepath.Join(base, "repo-ran"), filepath.Join(base, "user-ran")
			entry := func(mark, who string) string {
				return fmt.Sprintf(`{"command":"/bin/sh","args":["-c","echo ran >> %s; exec %s example-server --name %s"]}`, mark, heal, who)
			}
			projects := "{}"
			if tc.project != "" {
				projects = fmt.Sprintf(`{%q:%s}`, c.proj, tc.project)
			}
			write := func(p, s string) {
				if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(c.home, ".claude.json"), `{"hasCompletedOnboarding":true,"mcpServers":{"github":`+entry(userMark, "user")+`},"projects":`+projects+`}`)
			write(filepath.Join(c.proj, ".mcp.json"), `{"mcpServers":{"github":`+entry(repoMark, "repo")+`}}`)
			if tc.settings != "" {
				write(filepath.Join(c.proj, ".claude", "settings.json"), tc.settings)
			}
			// Before Claude Code runs: it migrates the approval lists
			// out of ~/.claude.json as it goes.
			all, err := claudecfg.Discover(claudecfg.Options{Home: c.home, ProjectDir: c.proj})
			if err != nil {
				t.Fatal(err)
			}
			s, ok := claudecfg.Lookup(all, "github")
			if !ok {
				t.Fatalf("Lookup found no github in %+v", all)
			}
			listed := c.list()["github"][0]
			if strings.Contains(listed, "--name repo") != strings.Contains(strings.Join(s.Args, " "), "--name repo") {
				t.Errorf("claude mcp list runs %q; Lookup picked %q (%s scope)", listed, s.Args, s.Scope)
			}
			if _, err := os.Stat(repoMark); (err == nil) != tc.repoRuns {
				t.Errorf("the repository's github ran: %v, want %v", err == nil, tc.repoRuns)
			}
		})
	}
}
