//go:build linux

package claudecfg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestPolicyMatchesClaude is the differential test of Claude Code's MCP
// policy (ccpolicy) against the real `claude mcp list`, on Claude Code
// 2.1.328 and 2.1.332, in each policy state: deny rules by name, command
// and URL in the user, project, local and managed settings and a managed
// drop-in; allowlists (the user's; the managed one by command); an
// exclusive managed-mcp.json; a cloned repository's .mcp.json under a
// trusted parent; an entry wrapped before a deny rule was written; and
// servers a session runs from a source mcp-heal does not read (the hook's
// mcp_server.source dynamic, plugin, managed).
//
// In each state: the entry mcp-heal says Claude Code runs for "x"
// (`mcp-heal status --json`) is the one `claude mcp list` runs, or none
// when it runs none; no hook starts a process (the commands leave a mark
// in a folder named per run, a remote entry's server counts its
// requests); doctor and heal run x only when Claude Code does; `wrap --all`
// changes nothing Claude Code runs or blocks (`claude mcp list` again).
//
// The managed files live in /etc/claude-code: every command runs in a
// private mount namespace (unshare -m) with an overlay on /etc whose upper
// folder holds them, so the host's /etc is never touched. It needs root,
// unshare and overlayfs, and fails without them.
func TestPolicyMatchesClaude(t *testing.T) {
	testenv.NeedsFull(t, "Claude Code and a private mount namespace")
	if os.Geteuid() != 0 {
		t.Fatal("needs root for a private mount namespace with an overlay on /etc (unshare -m)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("needs unshare (util-linux): %v", err)
	}
	heal := testenv.Binary(t)
	type state struct {
		user, project, local, managed, dropin, managedMCP string // settings files ("" none); @CMD@ is x's command as a JSON array, @URL@ the remote server's URL
		remote                                            bool   // x is a remote (http) entry
		repo                                              string // the clone's record in ~/.claude.json under its parent ("" none): x also in its .mcp.json
		afterWrap                                         bool   // the rules are written after wrap --all
	}
	states := map[string]state{
		"none":                              {},
		"user deny name":                    {user: `{"deniedMcpServers":[{"serverName":"x"}]}`},
		"user deny command":                 {user: `{"deniedMcpServers":[{"serverCommand":@CMD@}]}`},
		"user deny url":                     {user: `{"deniedMcpServers":[{"serverUrl":"@URL@"}]}`, remote: true},
		"project deny name":                 {project: `{"deniedMcpServers":[{"serverName":"x"}]}`},
		"local deny name":                   {local: `{"deniedMcpServers":[{"serverName":"x"}]}`},
		"managed deny name":                 {managed: `{"deniedMcpServers":[{"serverName":"x"}]}`},
		"managed deny command":              {managed: `{"deniedMcpServers":[{"serverCommand":@CMD@}]}`},
		"managed deny url":                  {managed: `{"deniedMcpServers":[{"serverUrl":"http://127.0.0.1:*"}]}`, remote: true},
		"drop-in deny name":                 {dropin: `{"deniedMcpServers":[{"serverName":"x"}]}`},
		"user allows another":               {user: `{"allowedMcpServers":[{"serverName":"y"}]}`},
		"managed allow command":             {managed: `{"allowedMcpServers":[{"serverCommand":@CMD@}]}`},
		"managed-mcp.json":                  {managedMCP: `{"mcpServers":{"m":{"command":"/bin/false"}}}`},
		"repo under trusted parent":         {repo: `{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true}`},
		"wrapped then user deny command":    {user: `{"deniedMcpServers":[{"serverCommand":@CMD@}]}`, afterWrap: true},
		"wrapped then managed deny command": {managed: `{"deniedMcpServers":[{"serverCommand":@CMD@}]}`, afterWrap: true},
		"wrapped then managed deny url":     {managed: `{"deniedMcpServers":[{"serverUrl":"http://127.0.0.1:*"}]}`, remote: true, afterWrap: true},
	}
	for _, version := range []string{testenv.ClaudeCode, testenv.ClaudeCode332} {
		claude := testenv.NPMBin(t, "claude", version)
		t.Run(version[strings.LastIndex(version, "@")+1:], func(t *testing.T) {
			for name, st := range states {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					p := newPolicyWorld(t, claude, heal, st.remote)
					fill := func(s string) string {
						return strings.NewReplacer("@CMD@", p.cmdJSON, "@URL@", p.url).Replace(s)
					}
					rules := func() {
						p.write(filepath.Join(p.home, ".claude", "settings.json"), fill(st.user))
						p.write(filepath.Join(p.proj, ".claude", "settings.json"), fill(st.project))
						p.write(filepath.Join(p.proj, ".claude", "settings.local.json"), fill(st.local))
						p.write(filepath.Join(p.managed, "managed-settings.json"), fill(st.managed))
						p.write(filepath.Join(p.managed, "managed-settings.d", "50-policy.json"), fill(st.dropin))
						p.write(filepath.Join(p.managed, "managed-mcp.json"), st.managedMCP)
					}
					if st.repo != "" {
						p.clone(st.repo)
					}
					if st.afterWrap {
						p.heal("", "wrap", "--all", "--shim", heal)
					}
					if !st.afterWrap {
						rules()
					}
					before := p.claudeRuns()
					if st.afterWrap {
						rules()
						// The deny rule still blocks: Claude Code runs the
						// shim, which refuses to start the server.
						p.listAndCheckNothingRan("claude mcp list after the rule, wrapped before it")
					}
					switch got := p.healRuns(); {
					case st.afterWrap && got != "":
						// Claude Code runs the shim; the shim runs nothing.
						t.Errorf("mcp-heal status says x runs (%q), wrapped before a deny rule of its server", got)
					case !st.afterWrap && got != before:
						t.Errorf("mcp-heal status says Claude Code runs %q for x; claude mcp list runs %q:\n%s", got, before, p.lastList)
					}
					for _, src := range []string{"user", "dynamic", "plugin", "managed"} {
						p.heal(fmt.Sprintf(`{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"mcp__x__echo","error":"MCP server \"x\" is not connected","mcp_server":{"name":"x","source":%q}}`, src), "hook", "PostToolUseFailure")
						p.nothingRan("the failure hook (source " + src + ")")
					}
					p.heal(`{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`, "hook", "SessionStart")
					p.nothingRan("the SessionStart hook")
					p.heal("", "status")
					p.nothingRan("status")
					for _, cmd := range []string{"doctor", "heal"} {
						p.heal("", cmd, "--timeout", "10s")
						ran := p.ran()
						if ran != "" && (before == "" || st.afterWrap || ran != before) {
							t.Errorf("%s ran %s; Claude Code runs %q", cmd, ran, before)
						}
					}
					if st.afterWrap {
						return
					}
					p.heal("", "wrap", "--all", "--shim", heal)
					p.nothingRan("wrap --all")
					if after := p.claudeRuns(); after != before {
						t.Errorf("after wrap --all, claude mcp list runs %q for x; before, %q:\n%s", after, before, p.lastList)
					}
				})
			}
		})
	}
}

// policyWorld is one policy state's home, project and managed folder,
// and its run of mcp-heal and Claude Code in a private mount namespace.
type policyWorld struct {
	t               *testing.T
	claude, bin     string
	base, home      string
	proj, managed   string // managed: the overlay's upper claude-code folder
	upper, work     string
	marks           string // the current run's mark folder
	runs            int
	cmdJSON, url    string
	requests        *atomic.Int64
	seenRequests    int64
	lastList        string
	remote, hasRepo bool
}

func newPolicyWorld(t *testing.T, claude, bin string, remote bool) *policyWorld {
	base, _ := filepath.EvalSymlinks(testenv.TempDir(t))
	if strings.ContainsAny(base, ",:") {
		t.Fatalf("%s: overlayfs options cannot name a folder with a comma or colon", base)
	}
	p := &policyWorld{t: t, claude: claude, bin: bin, base: base, home: filepath.Join(base, "home"), proj: filepath.Join(base, "code", "proj"),
		upper: filepath.Join(base, "upper"), work: filepath.Join(base, "work"), remote: remote}
	p.managed = filepath.Join(p.upper, "claude-code")
	for _, d := range []string{filepath.Join(p.home, ".claude"), filepath.Join(p.proj, ".git"), filepath.Join(p.proj, ".claude"), p.managed, p.work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-c", `echo ran >> "$MARKS/x"; exec ` + bin + ` example-server --name x`}
	cmd, _ := json.Marshal(append([]string{"/bin/sh"}, args...))
	p.cmdJSON = string(cmd)
	entry, _ := json.Marshal(map[string]any{"command": "/bin/sh", "args": args})
	if remote {
		p.url, p.requests = countingServer(t)
		entry, _ = json.Marshal(map[string]any{"type": "http", "url": p.url})
	}
	p.write(filepath.Join(p.home, ".claude.json"), `{"hasCompletedOnboarding":true,"mcpServers":{"x":`+string(entry)+`},"projects":{}}`)
	return p
}

// clone makes the project a cloned repository whose .mcp.json defines x
// too, under a folder (its parent) whose record in ~/.claude.json is
// record.
func (p *policyWorld) clone(record string) {
	p.hasRepo = true
	args := []string{"-c", `echo ran >> "$MARKS/repo"; exec ` + p.bin + ` example-server --name repo`}
	entry, _ := json.Marshal(map[string]any{"command": "/bin/sh", "args": args})
	p.write(filepath.Join(p.proj, ".mcp.json"), `{"mcpServers":{"x":`+string(entry)+`}}`)
	p.write(filepath.Join(p.proj, ".claude", "settings.json"), `{"enableAllProjectMcpServers":true}`)
	b, _ := os.ReadFile(filepath.Join(p.home, ".claude.json"))
	var cfg map[string]any
	json.Unmarshal(b, &cfg)
	var rec any
	json.Unmarshal([]byte(record), &rec)
	cfg["projects"] = map[string]any{filepath.Dir(p.proj): rec}
	b, _ = json.Marshal(cfg)
	p.write(filepath.Join(p.home, ".claude.json"), string(b))
}

// write writes path (nothing when data is "").
func (p *policyWorld) write(path, data string) {
	p.t.Helper()
	if data == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		p.t.Fatal(err)
	}
}

// command runs bin args in the project, in a private mount namespace
// where /etc/claude-code is the managed folder, with a fresh mark folder.
func (p *policyWorld) command(stdin, bin string, args ...string) string {
	p.t.Helper()
	p.runs++
	p.marks = filepath.Join(p.base, fmt.Sprintf("marks-%d", p.runs))
	os.MkdirAll(p.marks, 0o700)
	if p.requests != nil {
		p.seenRequests = p.requests.Load()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mount := fmt.Sprintf(`mount -t overlay overlay -o lowerdir=/etc,upperdir=%s,workdir=%s /etc && exec "$@"`, p.upper, p.work)
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", mount, "sh", bin}, args...)...)
	cmd.Dir, cmd.Stdin = p.proj, strings.NewReader(stdin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "MARKS=" + p.marks, "XDG_STATE_HOME=" + filepath.Join(p.base, "state"),
		"CLAUDE_PROJECT_DIR=" + p.proj, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		p.t.Fatalf("%s %v: timed out\n%s", filepath.Base(bin), args, out)
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		p.t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, out)
	}
	return string(out)
}

func (p *policyWorld) heal(stdin string, args ...string) string {
	return p.command(stdin, p.bin, args...)
}

// ran names what the last command ran: "user" (x's entry in
// ~/.claude.json, or its remote server), "repo" (the clone's), or "".
func (p *policyWorld) ran() string {
	var ran []string
	if _, err := os.Stat(filepath.Join(p.marks, "x")); err == nil {
		ran = append(ran, "user")
	}
	if p.requests != nil && p.requests.Load() != p.seenRequests {
		ran = append(ran, "user")
	}
	if _, err := os.Stat(filepath.Join(p.marks, "repo")); err == nil {
		ran = append(ran, "repo")
	}
	return strings.Join(ran, "+")
}

func (p *policyWorld) nothingRan(what string) {
	p.t.Helper()
	if r := p.ran(); r != "" {
		p.t.Errorf("%s started the %s entry of x", what, r)
	}
}

func (p *policyWorld) listAndCheckNothingRan(what string) {
	p.t.Helper()
	p.lastList = p.command("", p.claude, "mcp", "list")
	p.nothingRan(what + ":\n" + p.lastList)
}

// claudeRuns is the entry of x `claude mcp list` runs: "user", "repo" or
// "" (none listed).
func (p *policyWorld) claudeRuns() string {
	p.t.Helper()
	out := p.command("", p.claude, "mcp", "list")
	p.lastList = out
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "x: ") {
			continue
		}
		if strings.Contains(l, "--name repo") {
			return "repo"
		}
		return "user"
	}
	return ""
}

// healRuns is the entry of x `mcp-heal status --json` says Claude Code
// runs: not shadowed, approved when it must be, not blocked by policy.
func (p *policyWorld) healRuns() string {
	p.t.Helper()
	out := p.heal("", "status", "--json")
	var rep struct {
		Servers []struct {
			Name     string   `json:"name"`
			Scope    string   `json:"scope"`
			Args     []string `json:"args"`
			Shadowed bool     `json:"shadowed"`
			Approval string   `json:"approval"`
			Policy   any      `json:"policy"`
		} `json:"servers"`
	}
	i := strings.Index(out, "{")
	if i < 0 {
		p.t.Fatalf("status --json printed no JSON:\n%s", out)
	}
	if err := json.Unmarshal([]byte(out[i:]), &rep); err != nil {
		p.t.Fatalf("status --json: %v\n%s", err, out)
	}
	for _, s := range rep.Servers {
		if s.Name != "x" || s.Shadowed || s.Approval == "pending" || s.Approval == "rejected" || s.Policy != nil {
			continue
		}
		if s.Scope == "project" {
			return "repo"
		}
		return "user"
	}
	return ""
}

// countingServer is a Streamable HTTP MCP server that counts the requests
// it gets.
func countingServer(t *testing.T) (string, *atomic.Int64) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "counted", Version: "1.0.0"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", &n
}
