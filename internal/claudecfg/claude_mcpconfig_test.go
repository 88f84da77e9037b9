//go:build linux

package claudecfg_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/e2e"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestMCPConfigMatchesClaude is the differential test of --mcp-config in a
// live session (issue 31), on Claude Code 2.1.328 and 2.1.332: a `claude
// -p` session against a stand-in model, with the user's x in
// ~/.claude.json and a --mcp-config file defining x (the same name) or dyn
// (another), with and without --strict-mcp-config. The model calls the
// file's server; a PreToolUse hook of the user's settings records the
// payload Claude Code sends. What Claude Code did is logged: the servers
// it started (their marks), the tools it offered the model, and the
// call's mcp_server.source.
//
// mcp-heal must agree: the source the session reports for the file's
// server is one ccpolicy.Source says mcp-heal does not read ("dynamic"),
// so no entry of mcp-heal's files stands in for it; mcp-heal's hooks,
// given that very payload (and a failure of the call), start nothing;
// and the user's x runs in that session exactly when mcp-heal's status
// says it runs and the session is not strict.
func TestMCPConfigMatchesClaude(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code and a private mount namespace")
	if os.Geteuid() != 0 {
		t.Fatal("needs root for a private mount namespace with an overlay on /etc (unshare -m)")
	}
	heal := testenv.Binary(t)
	for _, version := range []string{testenv.ClaudeCode, testenv.ClaudeCode332} {
		claude := testenv.NPMBin(t, "claude", version)
		t.Run(version[strings.LastIndex(version, "@")+1:], func(t *testing.T) {
			for _, tt := range []struct {
				name   string
				server string // the --mcp-config file's server
				strict bool
			}{
				{"another name", "dyn", false},
				{"same name", "x", false},
				{"strict - another name", "dyn", true},
				{"strict - same name", "x", true},
			} {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					p := newPolicyWorld(t, claude, heal, false, false, false, "")
					tool := "mcp__" + tt.server + "__echo"
					m, err := e2e.NewModel(e2e.Turn{Tools: []e2e.ToolUse{{Name: tool, Input: map[string]any{"text": "hi"}}}}, e2e.Turn{Text: "done"})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { m.Close() })
					hooklog := filepath.Join(p.base, "hooks.jsonl")
					p.write(filepath.Join(p.home, ".claude", "settings.json"), `{"permissions":{"allow":["mcp__x","mcp__dyn"]},"hooks":{"PreToolUse":[{"matcher":"mcp__.*","hooks":[{"type":"command","command":"cat >> \"$HOOKLOG\"; echo >> \"$HOOKLOG\""}]}]}}`)
					cfg := filepath.Join(p.base, "mcp.json")
					dyn, _ := json.Marshal(map[string]any{"command": "/bin/sh", "args": []string{"-c", `echo ran >> "$MARKS/dyn"; exec ` + heal + ` example-server --name dyn`}})
					p.write(cfg, `{"mcpServers":{"`+tt.server+`":`+string(dyn)+`}}`)
					p.env = append(p.env, "ANTHROPIC_BASE_URL="+m.URL, "ANTHROPIC_API_KEY=sk-fake", "ENABLE_TOOL_SEARCH=false", "HOOKLOG="+hooklog)
					args := []string{"-p", "call the tool", "--output-format", "json", "--mcp-config", cfg}
					if tt.strict {
						args = append(args, "--strict-mcp-config")
					}
					out := p.command("", p.claude, args...)
					started := p.ran()
					var offered []string
					for _, r := range m.Main() {
						for _, n := range r.Tools {
							if strings.HasPrefix(n, "mcp__") && !contains(offered, n) {
								offered = append(offered, n)
							}
						}
					}
					sort.Strings(offered)
					payloads := hookPayloads(t, hooklog)
					if len(payloads) == 0 {
						t.Fatalf("the PreToolUse hook never ran for %s (started %q, offered %q):\n%s", tool, started, offered, out)
					}
					var src struct {
						MCPServer struct{ Name, Source string } `json:"mcp_server"`
					}
					json.Unmarshal(payloads[0], &src)
					t.Logf("Claude Code %s, --mcp-config %s (strict %v): started %q, offered the model %q; the call of %s came with mcp_server %+v",
						version, tt.server, tt.strict, started, offered, tool, src.MCPServer)

					// Claude Code's side, as the docs say it.
					if src.MCPServer.Source != "dynamic" {
						t.Errorf("the --mcp-config server's call came with source %q, not dynamic", src.MCPServer.Source)
					}
					userRuns := contains(offered, "mcp__x__echo") && !(tt.server == "x")
					if tt.strict && (strings.Contains(started, "user") || userRuns) {
						t.Errorf("with --strict-mcp-config Claude Code started the user's x (started %q, offered %q)", started, offered)
					}
					if tt.server == "x" && strings.Contains(started, "user") {
						t.Errorf("beside --mcp-config's x, Claude Code started the user's x too (started %q): the file's was to replace it", started)
					}

					// mcp-heal's side.
					if _, ours := ccpolicy.Source(src.MCPServer.Source); ours {
						t.Errorf("ccpolicy.Source(%q) says mcp-heal reads the entry Claude Code ran from --mcp-config", src.MCPServer.Source)
					}
					healSays := p.healRuns()
					if !tt.strict && tt.server == "dyn" && (healSays == "user") != strings.Contains(started, "user") {
						t.Errorf("mcp-heal status says Claude Code runs %q of x; beside --mcp-config dyn it started %q", healSays, started)
					}
					for _, ev := range []string{"PreToolUse", "PostToolUseFailure"} {
						payload := payloads[0]
						if ev == "PostToolUseFailure" {
							var obj map[string]any
							json.Unmarshal(payload, &obj)
							obj["hook_event_name"], obj["error"] = ev, fmt.Sprintf("MCP server %q is not connected", tt.server)
							payload, _ = json.Marshal(obj)
						}
						p.heal(string(payload), "hook", ev)
						p.nothingRan("mcp-heal's " + ev + " hook, given the session's payload")
					}
				})
			}
		})
	}
}

// hookPayloads reads the JSON objects the recording hook appended.
func hookPayloads(t *testing.T, path string) []json.RawMessage {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var m json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return out
		}
		out = append(out, m)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
