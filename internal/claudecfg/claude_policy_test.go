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
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-heal/mcp-heal/internal/e2e"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestPolicyMatchesClaude is the differential test of Claude Code's MCP
// policy (ccpolicy) against the real `claude mcp list`, on Claude Code
// 2.1.328 and 2.1.332, in each policy state: deny rules by name, command
// and URL in the user, project, local and managed settings and a managed
// drop-in; allowlists (the user's; the managed one by command); an
// exclusive managed-mcp.json; a cloned repository's .mcp.json under a
// trusted parent; an entry wrapped before a deny rule was written;
// servers a session runs from a source mcp-heal does not read (the hook's
// mcp_server.source dynamic, plugin, managed); and, for issue 31, servers
// a plugin provides (installed from a directory marketplace, as a user
// does: its own command, or the user's x's), allowManagedMcpServersOnly,
// serverCommand rules whose argv differs from the entry's (an extra
// argument, fewer, another order, a relative command in the rule or the
// entry, ${VAR} in the entry or the rule) and serverUrl patterns (no path, a star in the host or port,
// capitals, another scheme, host, port or path, a lone star, no scheme).
// Each state logs what `claude mcp list` ran. --mcp-config, with and
// without --strict-mcp-config, is TestMCPConfigMatchesClaude, in live
// sessions.
//
// In each state: the entries mcp-heal says Claude Code runs for "x" and
// "plugin:pl:x" (`mcp-heal status --json`) are the ones `claude mcp list`
// runs, or none when it runs none; no hook starts a process (the commands leave a mark
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
		user, project, local, managed, dropin, managedMCP string // settings files ("" none); placeholders: see fill
		remote                                            bool   // x is a remote (http) entry
		relative                                          bool   // x's command is "sh", found on PATH, not /bin/sh
		named                                             bool   // x's URL names the host localhost, not 127.0.0.1
		extra                                             string // one more argument of x's command, as written (POLICY_ARG=val in the environment)
		suffix                                            string // added to x's URL (a query, a slash)
		urlPath                                           string // x's URL's path instead of /mcp, as written (POLICY_PATH=mcp in the environment)
		newerBlocks                                       bool   // 2.1.332 blocks x, 2.1.328 runs it: mcp-heal runs it on neither
		plugin                                            string // a plugin provides an x too: "own" (its own command), "same" (the user's x's command and arguments)
		repo                                              string // the clone's record in ~/.claude.json under its parent ("" none): x also in its .mcp.json
		afterWrap                                         bool   // the rules are written after wrap --all
	}
	const (
		denyName = `{"deniedMcpServers":[{"serverName":"x"}]}`
	)
	denyURL := func(pattern string) string { return `{"deniedMcpServers":[{"serverUrl":"` + pattern + `"}]}` }
	denyCmd := func(cmd string) string { return `{"deniedMcpServers":[{"serverCommand":` + cmd + `}]}` }
	states := map[string]state{
		"none":                              {},
		"user deny name":                    {user: denyName},
		"user deny command":                 {user: denyCmd("@CMD@")},
		"user deny url":                     {user: denyURL("@URL@"), remote: true},
		"project deny name":                 {project: denyName},
		"local deny name":                   {local: denyName},
		"managed deny name":                 {managed: denyName},
		"managed deny command":              {managed: denyCmd("@CMD@")},
		"managed deny url":                  {managed: denyURL("http://127.0.0.1:*"), remote: true},
		"drop-in deny name":                 {dropin: denyName},
		"user allows another":               {user: `{"allowedMcpServers":[{"serverName":"y"}]}`},
		"managed allow command":             {managed: `{"allowedMcpServers":[{"serverCommand":@CMD@}]}`},
		"managed-mcp.json":                  {managedMCP: `{"mcpServers":{"m":{"command":"/bin/false"}}}`},
		"repo under trusted parent":         {repo: `{"hasTrustDialogAccepted":true,"enableAllProjectMcpServers":true}`},
		"wrapped then user deny command":    {user: denyCmd("@CMD@"), afterWrap: true},
		"wrapped then managed deny command": {managed: denyCmd("@CMD@"), afterWrap: true},
		"wrapped then managed deny url":     {managed: denyURL("http://127.0.0.1:*"), remote: true, afterWrap: true},

		// Servers a plugin provides (issue 31): plugin:pl:x, hook source
		// "plugin".
		"plugin server":                    {plugin: "own"},
		"plugin server - users command":    {plugin: "same"},
		"plugin server - deny short name":  {plugin: "own", user: denyName},
		"plugin server - deny full name":   {plugin: "own", user: `{"deniedMcpServers":[{"serverName":"plugin:pl:x"}]}`},
		"plugin server - deny its command": {plugin: "own", user: denyCmd("@PLUGINCMD@")},
		"plugin server - allow users only": {plugin: "own", managed: `{"allowedMcpServers":[{"serverCommand":@CMD@}]}`},

		// allowManagedMcpServersOnly.
		"managed only - managed list names another":      {managed: `{"allowManagedMcpServersOnly":true,"allowedMcpServers":[{"serverName":"y"}]}`, user: `{"allowedMcpServers":[{"serverName":"x"}]}`},
		"managed only - managed list names x":            {managed: `{"allowManagedMcpServersOnly":true,"allowedMcpServers":[{"serverName":"x"}]}`, user: `{"allowedMcpServers":[{"serverName":"y"}]}`},
		"managed only - no managed list":                 {managed: `{"allowManagedMcpServersOnly":true}`, user: `{"allowedMcpServers":[{"serverName":"y"}]}`},
		"managed only - user deny still counts":          {managed: `{"allowManagedMcpServersOnly":true,"allowedMcpServers":[{"serverName":"x"}]}`, user: denyName},
		"managed only in user settings - ignored":        {managed: `{"allowedMcpServers":[{"serverName":"y"}]}`, user: `{"allowManagedMcpServersOnly":true,"allowedMcpServers":[{"serverName":"x"}]}`},
		"managed only - plugin server - list names user": {plugin: "own", managed: `{"allowManagedMcpServersOnly":true,"allowedMcpServers":[{"serverName":"x"}]}`},

		// Command rules whose argv differs from the entry's.
		"deny command - extra argument":              {user: denyCmd("@CMDEXTRA@")},
		"deny command - fewer arguments":             {user: denyCmd("@CMDSHORT@")},
		"deny command - another order":               {user: denyCmd("@CMDSWAP@")},
		"deny command - rule relative":               {user: denyCmd("@RELCMD@")},
		"deny command - entry relative":              {user: denyCmd("@ABSCMD@"), relative: true},
		"deny command - both relative":               {user: denyCmd("@RELCMD@"), relative: true},
		"managed allow command - extra argument":     {managed: `{"allowedMcpServers":[{"serverCommand":@CMDEXTRA@}]}`},
		"managed allow command - entry relative":     {managed: `{"allowedMcpServers":[{"serverCommand":@ABSCMD@}]}`, relative: true},
		"deny command - entry var - rule its value":  {user: denyCmd("@CMDVAL@"), extra: "${POLICY_ARG}"},
		"deny command - entry value - rule var":      {user: denyCmd("@CMDREF@"), extra: "val"},
		"deny command - entry default - rule it":     {user: denyCmd("@CMDDFLT@"), extra: "${POLICY_UNSET:-dflt}"},
		"deny command - entry var - rule as written": {user: denyCmd("@CMD@"), extra: "${POLICY_ARG}"},
		"managed allow command - entry var":          {managed: `{"allowedMcpServers":[{"serverCommand":@CMDVAL@}]}`, extra: "${POLICY_ARG}"},

		// URL patterns.
		"deny url - any port and path":                {user: denyURL("http://127.0.0.1:*/*"), remote: true},
		"deny url - no path":                          {user: denyURL("http://127.0.0.1:@PORT@"), remote: true},
		"deny url - host wildcard":                    {user: denyURL("http://*.0.0.1/*"), remote: true},
		"deny url - scheme in capitals":               {user: denyURL("HTTP://127.0.0.1:*/mcp"), remote: true},
		"deny url - host in capitals":                 {user: denyURL("http://LOCALHOST:*/*"), remote: true, named: true},
		"deny url - named host wildcard":              {user: denyURL("http://*host/*"), remote: true, named: true},
		"deny url - named host - port star":           {user: denyURL("http://local*:*/mcp"), remote: true, named: true},
		"deny url - other scheme":                     {user: denyURL("https://127.0.0.1:*/*"), remote: true},
		"deny url - other host":                       {user: denyURL("http://localhost:*/*"), remote: true},
		"deny url - other port":                       {user: denyURL("http://127.0.0.1:1/*"), remote: true},
		"deny url - path prefix":                      {user: denyURL("http://127.0.0.1:*/m*"), remote: true},
		"deny url - other path":                       {user: denyURL("http://127.0.0.1:*/other"), remote: true},
		"deny url - lone star":                        {user: denyURL("*"), remote: true},
		"deny url - no scheme":                        {user: denyURL("127.0.0.1:*/*"), remote: true},
		"deny url - entry query - rule path":          {user: denyURL("http://127.0.0.1:*/mcp"), remote: true, suffix: "?k=1", newerBlocks: true},
		"deny url - entry slash - rule path":          {user: denyURL("http://127.0.0.1:*/mcp"), remote: true, suffix: "/", newerBlocks: true},
		"deny url - rule slash":                       {user: denyURL("http://127.0.0.1:*/mcp/"), remote: true, newerBlocks: true},
		"managed allow url - entry query - rule path": {managed: `{"allowedMcpServers":[{"serverUrl":"http://127.0.0.1:*/mcp"}]}`, remote: true, suffix: "?k=1"},
		"managed allow url pattern":                   {managed: `{"allowedMcpServers":[{"serverUrl":"http://127.0.0.1:*/*"}]}`, remote: true},
		"managed allow url - another host":            {managed: `{"allowedMcpServers":[{"serverUrl":"http://localhost:*/*"}]}`, remote: true},

		// ${VAR} in a URL rule or entry.
		"deny url - rule var":                    {user: denyURL("http://127.0.0.1:*/${POLICY_PATH}"), remote: true},
		"deny url - rule var default":            {user: denyURL("http://127.0.0.1:*/${POLICY_UNSET:-mcp}"), remote: true},
		"deny url - entry var - rule its value":  {user: denyURL("http://127.0.0.1:*/mcp"), remote: true, urlPath: "/${POLICY_PATH}"},
		"deny url - entry var - rule as written": {user: denyURL("http://127.0.0.1:*/${POLICY_PATH}"), remote: true, urlPath: "/${POLICY_PATH}"},
		"managed allow url - rule var":           {managed: `{"allowedMcpServers":[{"serverUrl":"http://127.0.0.1:*/${POLICY_PATH}"}]}`, remote: true},
	}
	for _, version := range []string{testenv.ClaudeCode, testenv.ClaudeCode332} {
		claude := testenv.NPMBin(t, "claude", version)
		t.Run(version[strings.LastIndex(version, "@")+1:], func(t *testing.T) {
			for name, st := range states {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					p := newPolicyWorld(t, claude, heal, st.remote, st.relative, st.named, st.extra)
					if st.urlPath != "" {
						p.setURL(strings.TrimSuffix(p.url, "/mcp") + st.urlPath)
					}
					if st.suffix != "" {
						p.setURL(p.url + st.suffix)
					}
					if st.plugin != "" {
						p.installPlugin(st.plugin == "same")
					}
					fill := func(s string) string {
						return strings.NewReplacer("@CMD@", p.argvJSON(p.cmd), "@URL@", p.url, "@PORT@", p.port,
							"@CMDEXTRA@", p.argvJSON(append(p.cmd[:len(p.cmd):len(p.cmd)], "extra")), "@CMDSHORT@", p.argvJSON(p.cmd[:2]),
							"@CMDSWAP@", p.argvJSON([]string{p.cmd[0], p.cmd[2], p.cmd[1]}),
							"@RELCMD@", p.argvJSON(append([]string{"sh"}, p.cmd[1:]...)), "@ABSCMD@", p.argvJSON(append([]string{"/bin/sh"}, p.cmd[1:]...)),
							"@PLUGINCMD@", p.argvJSON(p.pluginCmd),
							"@CMDVAL@", p.argvJSON(append(p.cmd[:3:3], "val")), "@CMDREF@", p.argvJSON(append(p.cmd[:3:3], "${POLICY_ARG}")),
							"@CMDDFLT@", p.argvJSON(append(p.cmd[:3:3], "dflt"))).Replace(s)
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
					want := before // what mcp-heal must say runs, and may run
					if st.newerBlocks && strings.HasSuffix(version, "@2.1.328") {
						// A deny rule 2.1.332 applies and 2.1.328 does not:
						// mcp-heal never runs what either release blocks.
						if before != "user" {
							t.Errorf("2.1.328 no longer runs x here (claude mcp list runs %q): the state's note is out of date", before)
						}
						want = ""
					}
					session := p.sessionRuns()
					t.Logf("Claude Code %s, %s: claude mcp list runs %q; a -p session started %q", version, name, before, session)
					switch {
					case st.repo != "":
						// In -p the trust dialog is skipped, and Claude
						// Code starts .mcp.json servers never approved
						// (docs/claude-code-behaviour.md): mcp-heal goes
						// by the approval, as `claude mcp list` does.
					case session != before:
						t.Errorf("a -p session started %q of x; claude mcp list runs %q:\n%s", session, before, p.lastList)
					}
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
					case !st.afterWrap && got != want:
						t.Errorf("mcp-heal status says Claude Code runs %q for x; claude mcp list runs %q (mcp-heal must say %q):\n%s", got, before, want, p.lastList)
					}
					for _, src := range []string{"user", "dynamic", "plugin", "managed"} {
						p.heal(fmt.Sprintf(`{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"mcp__x__echo","error":"MCP server \"x\" is not connected","mcp_server":{"name":"x","source":%q}}`, src), "hook", "PostToolUseFailure")
						p.nothingRan("the failure hook (source " + src + ")")
					}
					if st.plugin != "" {
						p.heal(`{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"mcp__plugin_pl_x__echo","error":"MCP server \"plugin:pl:x\" is not connected","mcp_server":{"name":"plugin:pl:x","source":"plugin"}}`, "hook", "PostToolUseFailure")
						p.nothingRan("the failure hook (plugin:pl:x, source plugin)")
						p.pluginHooks(strings.Contains(session, "plugin"))
					}
					p.heal(`{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`, "hook", "SessionStart")
					p.nothingRan("the SessionStart hook")
					p.heal("", "status")
					p.nothingRan("status")
					for _, cmd := range []string{"doctor", "heal"} {
						p.heal("", cmd, "--timeout", "10s")
						if ran := p.ran(); ran != "" && (st.afterWrap || !subset(ran, want)) {
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
	cmd             []string // x's command and arguments, as written
	pluginCmd       []string // the plugin's x's
	url, port       string
	requests        *atomic.Int64
	seenRequests    int64
	lastList        string
	remote, hasRepo bool
	env             []string // more environment for every command
	pluginPayload   json.RawMessage
}

func newPolicyWorld(t *testing.T, claude, bin string, remote, relative, named bool, extra string) *policyWorld {
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
	sh := "/bin/sh"
	if relative {
		sh = "sh"
	}
	p.cmd = []string{sh, "-c", `echo ran >> "$MARKS/x"; exec ` + bin + ` example-server --name x`}
	if extra != "" {
		p.cmd = append(p.cmd, extra) // sh's $0
	}
	p.env = []string{"POLICY_ARG=val", "POLICY_PATH=mcp"}
	entry, _ := json.Marshal(map[string]any{"command": p.cmd[0], "args": p.cmd[1:]})
	if remote {
		p.url, p.requests = countingServer(t)
		if named {
			p.url = strings.Replace(p.url, "127.0.0.1", "localhost", 1)
		}
		p.port = p.url[strings.LastIndex(p.url, ":")+1 : strings.LastIndex(p.url, "/")]
		entry, _ = json.Marshal(map[string]any{"type": "http", "url": p.url})
	}
	p.write(filepath.Join(p.home, ".claude.json"), `{"hasCompletedOnboarding":true,"mcpServers":{"x":`+string(entry)+`},"projects":{}}`)
	return p
}

func (p *policyWorld) argvJSON(argv []string) string {
	b, _ := json.Marshal(argv)
	return string(b)
}

// installPlugin installs plugin pl from a directory marketplace mk, as a
// user does (claude plugin marketplace add, claude plugin install): its
// .mcp.json defines x, with the user's x's command and arguments when
// same, else its own (which leaves the mark "plugin").
func (p *policyWorld) installPlugin(same bool) {
	p.t.Helper()
	mk := filepath.Join(p.base, "mk")
	p.pluginCmd = []string{"/bin/sh", "-c", `echo ran >> "$MARKS/plugin"; exec ` + p.bin + ` example-server --name plugin`}
	if same {
		p.pluginCmd = p.cmd
	}
	entry, _ := json.Marshal(map[string]any{"command": p.pluginCmd[0], "args": p.pluginCmd[1:]})
	p.write(filepath.Join(mk, ".claude-plugin", "marketplace.json"), `{"name":"mk","owner":{"name":"test"},"plugins":[{"name":"pl","source":"./pl","description":"a test plugin"}]}`)
	p.write(filepath.Join(mk, "pl", ".claude-plugin", "plugin.json"), `{"name":"pl","version":"1.0.0","description":"a test plugin"}`)
	p.write(filepath.Join(mk, "pl", ".mcp.json"), `{"mcpServers":{"x":`+string(entry)+`}}`)
	for _, args := range [][]string{{"plugin", "marketplace", "add", mk}, {"plugin", "install", "pl@mk"}} {
		if out := p.command("", p.claude, args...); !strings.Contains(strings.ToLower(out), "success") {
			p.t.Fatalf("claude %s:\n%s", strings.Join(args, " "), out)
		}
	}
	p.nothingRan("installing the plugin")
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

// write writes path (nothing when data is ""). A JSON object is merged
// into the one the file holds: installing a plugin enabled it in the
// user's settings, where the rules go too.
func (p *policyWorld) write(path, data string) {
	p.t.Helper()
	if data == "" {
		return
	}
	if old, err := os.ReadFile(path); err == nil {
		var was, add map[string]any
		if json.Unmarshal(old, &was) == nil && json.Unmarshal([]byte(data), &add) == nil && was != nil && add != nil {
			for k, v := range add {
				was[k] = v
			}
			b, _ := json.Marshal(was)
			data = string(b)
		}
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
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.home, "MARKS=" + p.marks, "XDG_STATE_HOME=" + filepath.Join(p.base, "state"),
		"CLAUDE_PROJECT_DIR=" + p.proj, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}, p.env...)
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
// ~/.claude.json, or its remote server), "repo" (the clone's), "plugin"
// (the plugin's x), joined by "+", or "".
func (p *policyWorld) ran() string {
	var ran []string
	if _, err := os.Stat(filepath.Join(p.marks, "x")); err == nil || p.requests != nil && p.requests.Load() != p.seenRequests {
		ran = append(ran, "user")
	}
	for _, m := range []string{"repo", "plugin", "dyn"} {
		if _, err := os.Stat(filepath.Join(p.marks, m)); err == nil {
			ran = append(ran, m)
		}
	}
	sort.Strings(ran)
	return strings.Join(ran, "+")
}

// subset says whether every entry ran names is one of runs.
func subset(ran, runs string) bool {
	for _, r := range strings.Split(ran, "+") {
		if !strings.Contains("+"+runs+"+", "+"+r+"+") {
			return false
		}
	}
	return true
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

// claudeRuns is what `claude mcp list` runs of x and plugin:pl:x: as
// ran names them, or "" (none listed).
func (p *policyWorld) claudeRuns() string {
	p.t.Helper()
	out := p.command("", p.claude, "mcp", "list")
	p.lastList = out
	var runs []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "x: ") && strings.Contains(l, "--name repo"):
			runs = append(runs, "repo")
		case strings.HasPrefix(l, "x: "):
			runs = append(runs, "user")
		case strings.HasPrefix(l, "plugin:pl:x: "):
			runs = append(runs, "plugin")
		}
	}
	sort.Strings(runs)
	return strings.Join(runs, "+")
}

// sessionRuns is what a `claude -p` session, against a stand-in model,
// starts of x and plugin:pl:x: as ran names them. With a plugin
// installed, the model calls the plugin's x, and a PreToolUse hook of the
// user's settings records the payload Claude Code sends for it
// (p.pluginPayload; nil when Claude Code did not offer the tool).
func (p *policyWorld) sessionRuns() string {
	p.t.Helper()
	script := []e2e.Turn{{Text: "done"}}
	hooklog := filepath.Join(p.base, "hooks.jsonl")
	if p.pluginCmd != nil {
		script = append([]e2e.Turn{{Tools: []e2e.ToolUse{{Name: pluginTool, Input: map[string]any{"text": "hi"}}}}}, script...)
		p.write(filepath.Join(p.home, ".claude", "settings.json"), `{"permissions":{"allow":["mcp__plugin_pl_x"]},"hooks":{"PreToolUse":[{"matcher":"mcp__.*","hooks":[{"type":"command","command":"cat >> \"$HOOKLOG\"; echo >> \"$HOOKLOG\""}]}]}}`)
	}
	m, err := e2e.NewModel(script...)
	if err != nil {
		p.t.Fatal(err)
	}
	defer m.Close()
	env := p.env
	p.env = append(env[:len(env):len(env)], "ANTHROPIC_BASE_URL="+m.URL, "ANTHROPIC_API_KEY=sk-fake", "ENABLE_TOOL_SEARCH=false", "HOOKLOG="+hooklog)
	defer func() { p.env = env }()
	if out := p.command("", p.claude, "-p", "hi", "--output-format", "json"); !strings.Contains(out, "done") {
		p.t.Fatalf("claude -p did not finish:\n%s", out)
	}
	if ps := hookPayloads(p.t, hooklog); len(ps) > 0 {
		p.pluginPayload = ps[0]
	}
	return p.ran()
}

// pluginTool is the plugin's x's echo tool, as Claude Code names it.
const pluginTool = "mcp__plugin_pl_x__echo"

// healRuns is what `mcp-heal status --json` says Claude Code runs of x
// and plugin:pl:x: not shadowed, approved when it must be, not blocked by
// policy.
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
	var runs []string
	for _, s := range rep.Servers {
		if s.Shadowed || s.Approval == "pending" || s.Approval == "rejected" || s.Policy != nil {
			continue
		}
		switch {
		case s.Name == "x" && s.Scope == "project":
			runs = append(runs, "repo")
		case s.Name == "x":
			runs = append(runs, "user")
		case s.Name == "plugin:pl:x":
			runs = append(runs, "plugin")
		}
	}
	sort.Strings(runs)
	return strings.Join(runs, "+")
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

// pluginHooks feeds the PreToolUse payload the session sent for the
// plugin's x (when it ran) to mcp-heal's hooks, as it came and as a
// failure of the call: its source must be "plugin", and they start
// nothing.
func (p *policyWorld) pluginHooks(ran bool) {
	p.t.Helper()
	if !ran {
		if p.pluginPayload != nil {
			p.t.Errorf("the session called the plugin's x, which it did not start: %s", p.pluginPayload)
		}
		return
	}
	if p.pluginPayload == nil {
		p.t.Fatal("the session started the plugin's x, but its call reached no PreToolUse hook")
	}
	var obj map[string]any
	json.Unmarshal(p.pluginPayload, &obj)
	p.t.Logf("the session's PreToolUse payload for %s: mcp_server %v", pluginTool, obj["mcp_server"])
	if srv, _ := obj["mcp_server"].(map[string]any); srv["source"] != "plugin" || srv["name"] != "plugin:pl:x" {
		p.t.Errorf("the plugin's x came with mcp_server %v, not plugin:pl:x from source plugin", obj["mcp_server"])
	}
	p.heal(string(p.pluginPayload), "hook", "PreToolUse")
	p.nothingRan("mcp-heal's PreToolUse hook, given the session's payload for the plugin's x")
	obj["hook_event_name"], obj["error"] = "PostToolUseFailure", `MCP server "plugin:pl:x" is not connected`
	b, _ := json.Marshal(obj)
	p.heal(string(b), "hook", "PostToolUseFailure")
	p.nothingRan("mcp-heal's PostToolUseFailure hook, given the session's payload for the plugin's x")
	if dir := os.Getenv("MCP_HEAL_RECORD_PAYLOADS"); dir != "" {
		os.WriteFile(filepath.Join(dir, "PreToolUse.mcp-plugin.json"), p.pluginPayload, 0o600)
	}
}

// setURL makes x's entry a remote one of url.
func (p *policyWorld) setURL(url string) {
	p.url = url
	entry, _ := json.Marshal(map[string]any{"type": "http", "url": p.url})
	p.write(filepath.Join(p.home, ".claude.json"), `{"mcpServers":{"x":`+string(entry)+`}}`)
}
