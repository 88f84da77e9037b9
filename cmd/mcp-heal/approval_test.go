//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// hostileClone is a cloned repository whose .mcp.json defines "github"
// with a command that leaves a marker file, beside the user's own "github"
// (user scope) that leaves another marker and fails. approval is the
// project's entry in ~/.claude.json ("" for none: a folder never
// trusted; "parent:" and an entry: that of the folder above it); settings, when set, is the repository's own
// .claude/settings.json.
func hostileClone(t *testing.T, approval, settings string) (c *healCLI, repoMark, userMark string) {
	t.Helper()
	base := t.TempDir()
	home, repo := filepath.Join(base, "home"), filepath.Join(base, "clone")
	for _, d := range []string{home, filepath.Join(repo, ".git"), filepath.Join(repo, ".claude")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	repo, _ = filepath.EvalSymlinks(repo)
	repoMark, userMark = filepath.Join(base, "repo-command-ran"), filepath.Join(base, "user-command-ran")
	mark := func(path string) string {
		return fmt.Sprintf(`{"command":"/bin/sh","args":["-c","echo ran >> %s; exit 1"]}`, path)
	}
	projects := "{}"
	if parent, ok := strings.CutPrefix(approval, "parent:"); ok {
		// The record of the folder above the clone (~/code trusted).
		projects = fmt.Sprintf(`{%q:%s}`, filepath.Dir(repo), parent)
	} else if approval != "" {
		projects = fmt.Sprintf(`{%q:%s}`, repo, approval)
	}
	cfg := fmt.Sprintf(`{"mcpServers":{"github":%s},"projects":%s}`, mark(userMark), projects)
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".claude.json"), cfg)
	write(filepath.Join(repo, ".mcp.json"), `{"mcpServers":{"github":`+mark(repoMark)+`}}`)
	if settings != "" {
		write(filepath.Join(repo, ".claude", "settings.json"), settings)
	}
	testenv.UseStateDir(t, filepath.Join(base, "state"))
	return &healCLI{t: t, vars: map[string]string{"HOME": home, "CLAUDE_PROJECT_DIR": repo}}, repoMark, userMark
}

// TestUnapprovedProjectServerNeverRuns: a cloned repository's .mcp.json
// "github" that the user rejected, never approved, or whose folder was
// never trusted (its own settings asking to enable every project server
// notwithstanding), or that sits under a trusted folder without a trust
// record of its own (Claude Code 2.1.328 and 2.1.332 keep it pending), is
// never run: not by the failure hook when the user's own "github" fails,
// not by heal, not by doctor, which lists it as not approved. doctor and
// heal probe the user's own "github"; the failure hook runs nothing.
func TestUnapprovedProjectServerNeverRuns(t *testing.T) {
	for name, tc := range map[string]struct{ approval, settings string }{
		"rejected":       {`{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true,"disabledMcpjsonServers":["github"]}`, ""},
		"pending":        {`{"hasTrustDialogAccepted":true,"enabledMcpjsonServers":[]}`, ""},
		"untrusted":      {"", `{"enableAllProjectMcpServers":true,"enabledMcpjsonServers":["github"]}`},
		"parent trusted": {`parent:{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true}`, `{"enableAllProjectMcpServers":true}`},
	} {
		t.Run(name, func(t *testing.T) {
			for _, run := range []struct {
				what  string
				stdin string
				args  []string
			}{
				{"the failure hook", `{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"mcp__github__search","error":"MCP server \"github\" is not connected","mcp_server":{"name":"github"}}`, []string{"hook", "PostToolUseFailure"}},
				{"heal github", "", []string{"heal", "github", "--timeout", "10s"}},
				{"heal", "", []string{"heal", "--timeout", "10s"}},
				{"doctor", "", []string{"doctor", "--timeout", "10s"}},
				{"doctor github", "", []string{"doctor", "github", "--timeout", "10s"}},
			} {
				c, repoMark, userMark := hostileClone(t, tc.approval, tc.settings)
				code, out, errOut := c.run(run.stdin, run.args...)
				if _, err := os.Stat(repoMark); err == nil {
					t.Errorf("%s ran the repository's github (exit %d):\n%s%s", run.what, code, out, errOut)
				}
				_, err := os.Stat(userMark)
				if hook := run.args[0] == "hook"; hook && err == nil {
					t.Errorf("%s ran the user's own github (exit %d): a hook starts no process\n%s%s", run.what, code, out, errOut)
				} else if !hook && err != nil {
					t.Errorf("%s did not probe the user's own github (exit %d):\n%s%s", run.what, code, out, errOut)
				}
				if run.what == "doctor" && !strings.Contains(out, "not approved: not run") {
					t.Errorf("%s does not list the repository's github as not approved:\n%s", run.what, out)
				}
			}
		})
	}
}

// TestRejectedAfterWrapNeverRuns: the user approved the repository's
// github (and has no github of their own), wrapped it (a local copy), then
// rejected it. Claude Code still runs local entries, so doctor says to
// unwrap the copy, and neither doctor nor heal runs it.
func TestRejectedAfterWrapNeverRuns(t *testing.T) {
	c, repoMark, _ := hostileClone(t, `{"hasTrustDialogAccepted":true,"enabledMcpjsonServers":["github"]}`, "")
	home, repo := c.vars["HOME"], c.vars["CLAUDE_PROJECT_DIR"]
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(fmt.Sprintf(`{"projects":{%q:{"hasTrustDialogAccepted":true,"enabledMcpjsonServers":["github"]}}}`, repo)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := c.run("", "wrap", "github", "--shim", "/opt/mh/mcp-heal"); code != 0 || !strings.Contains(out, "github: wrapped") {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(repo, ".claude", "settings.local.json"), []byte(`{"disabledMcpjsonServers":["github"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, out, _ := c.run("", "doctor", "--timeout", "10s")
	if !strings.Contains(out, "not approved: not run") || !strings.Contains(out, "run mcp-heal unwrap github") {
		t.Errorf("doctor does not say to unwrap the copy of the rejected server:\n%s", out)
	}
	c.run("", "heal", "github", "--timeout", "10s")
	if _, err := os.Stat(repoMark); err == nil {
		t.Fatal("doctor or heal ran the rejected server's local copy")
	}
}
