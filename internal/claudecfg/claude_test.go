package claudecfg_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg/wrap"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

const (
	secretHeader = "Bearer s3cret-tok-7f3a"
	urlToken     = "qtok-91x2"
)

// remoteServer is a Streamable HTTP MCP server (the official Go SDK) that
// answers only requests carrying secretHeader.
func remoteServer(t *testing.T) (string, *atomic.Int64) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote-fixture", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var authed atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != secretHeader {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		authed.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", &authed
}

type claudeEnv struct {
	t            *testing.T
	claude, heal string
	home, proj   string
	env          []string
	lastList     string // the output of the last list()
}

func (c *claudeEnv) run(bin string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = c.proj, c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

var listLine = regexp.MustCompile(`(?m)^(\S+): (.*) - (.*)$`)

// list runs `claude mcp list` and returns name -> "command line - status".
func (c *claudeEnv) list() map[string][2]string {
	out := c.run(c.claude, "mcp", "list")
	m := map[string][2]string{}
	for _, l := range listLine.FindAllStringSubmatch(out, -1) {
		m[l[1]] = [2]string{l[2], l[3]}
	}
	c.t.Logf("claude mcp list:\n%s", out)
	c.lastList = out
	return m
}

// TestWrapWithRealClaude: servers added with `claude mcp add` in every
// scope, plus a plugin's, are what Discover finds; after `mcp-heal wrap
// --all` Claude Code still parses the files, launches every server through
// the shim and connects (the remote one with its secret header carried in
// env, not argv); `mcp-heal unwrap --all` gives back the exact entries.
func TestWrapWithRealClaude(t *testing.T) {
	c := &claudeEnv{t: t, claude: testenv.NPMBin(t, "claude", testenv.ClaudeCode), heal: testenv.Binary(t)}
	base := testenv.TempDir(t)
	c.home, c.proj = filepath.Join(base, "home"), filepath.Join(base, "prøject")
	os.MkdirAll(c.home, 0o700)
	os.MkdirAll(filepath.Join(c.proj, ".claude"), 0o755)
	for _, kv := range os.Environ() {
		// An empty CLAUDE_CONFIG_DIR is not unset for Claude Code: it would
		// put its files in the working directory.
		if !strings.HasPrefix(kv, "CLAUDE_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, "HOME="+c.home, "XDG_STATE_HOME="+filepath.Join(base, "state"), "XDG_DATA_HOME="+filepath.Join(base, "data"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1")
	url, authed := remoteServer(t)
	// With the folder trusted (see trust below), this approves the
	// project's .mcp.json servers.
	os.WriteFile(filepath.Join(c.proj, ".claude", "settings.local.json"), []byte(`{"enableAllProjectMcpServers": true}`), 0o644)

	c.run(c.claude, "mcp", "add", "-s", "user", "ex-user", "-e", "EXAMPLE_SECRET=hunter2", "--", c.heal, "example-server", "--name", "user one")
	c.run(c.claude, "mcp", "add", "-s", "local", "ex-local", "--", c.heal, "example-server")
	c.run(c.claude, "mcp", "add", "-s", "project", "ex-project", "--", c.heal, "example-server", "--era", "handshake")
	// The URL carries a token in its query too, which wrap must keep out
	// of the shim's argv (--url-env).
	c.run(c.claude, "mcp", "add", "-s", "user", "--transport", "http", "remote", url+"?token="+urlToken, "-H", "Authorization: "+secretHeader)

	// A plugin with its own server, from a local marketplace.
	mk := filepath.Join(base, "market")
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mk, ".claude-plugin", "marketplace.json"), `{"name":"mk","owner":{"name":"t"},"plugins":[{"name":"pl","source":"./pl"}]}`)
	write(filepath.Join(mk, "pl", ".claude-plugin", "plugin.json"), `{"name":"pl","version":"1.0.0"}`)
	write(filepath.Join(mk, "pl", ".mcp.json"), `{"mcpServers":{"ex":{"command":"`+c.heal+`","args":["example-server","--name","plugin"]}}}`)
	c.run(c.claude, "plugin", "marketplace", "add", mk)
	c.run(c.claude, "plugin", "install", "pl@mk")

	global := filepath.Join(c.home, ".claude.json")
	mcpJSON := filepath.Join(c.proj, ".mcp.json")
	trust(t, global, c.proj) // as accepting the folder trust dialog does
	before := c.list()
	o := claudecfg.Options{Home: c.home, ProjectDir: c.proj}
	servers, err := claudecfg.Discover(o)
	if err != nil {
		t.Fatal(err)
	}
	var found, listed []string
	for _, s := range servers {
		found = append(found, s.Name)
	}
	for n, v := range before {
		listed = append(listed, n)
		if !strings.Contains(v[1], "Connected") {
			t.Fatalf("%s does not connect before wrap: %s", n, v[1])
		}
	}
	sort.Strings(found)
	sort.Strings(listed)

	if strings.Join(found, ",") != strings.Join(listed, ",") {
		t.Fatalf("Discover found %v, claude mcp list shows %v", found, listed)
	}

	origGlobal, _ := os.ReadFile(global)
	origProject, _ := os.ReadFile(mcpJSON)
	userRaw := gjson.GetBytes(origGlobal, "mcpServers").Raw
	localRaw := gjson.GetBytes(origGlobal, "projects."+gjson.Escape(c.proj)+".mcpServers").Raw
	if localRaw == "" {
		t.Fatalf("no local servers under %s in ~/.claude.json", c.proj)
	}

	out := c.run(c.heal, "wrap", "--all")
	for _, want := range []string{"ex-user: wrapped (user", "ex-local: wrapped (local", "ex-project: wrapped (project", "remote: wrapped (user", "/mcp reconnect"} {
		if !strings.Contains(out, want) {
			t.Fatalf("wrap output lacks %q:\n%s", want, out)
		}
	}
	if fi, _ := os.Stat(global); fi.Mode().Perm() != 0o600 {
		t.Fatalf("~/.claude.json mode is now %v", fi.Mode().Perm())
	}
	if again := c.run(c.heal, "wrap", "--all"); strings.Contains(again, ": wrapped") {
		t.Fatalf("second wrap changed something:\n%s", again)
	}

	authedBefore := authed.Load()
	after := c.list()
	// Header values live in the entry's env and reach the shim by
	// --header-env: Claude Code must not see a ${VAR} it would warn about.
	if strings.Contains(c.lastList, "Missing environment") {
		t.Errorf("claude mcp list warns after wrap:\n%s", c.lastList)
	}
	for _, n := range []string{"ex-user", "ex-local", "ex-project", "remote"} {
		v := after[n]
		if !strings.HasPrefix(v[0], c.heal+" shim --name "+n+" ") {
			t.Errorf("%s: claude runs %q, want the shim", n, v[0])
		}
		if !strings.Contains(v[1], "Connected") {
			t.Errorf("%s: %s after wrap", n, v[1])
		}
		if strings.Contains(v[0], "s3cret") || strings.Contains(v[0], urlToken) {
			t.Errorf("%s: a secret is on the command line: %s", n, v[0])
		}
		if n == "remote" && !strings.Contains(v[0], "--url-env "+claudecfg.URLEnvName) {
			t.Errorf("remote: claude runs %q, want the URL read from the env (--url-env)", v[0])
		}
	}
	if authed.Load() == authedBefore {
		t.Error("the remote server saw no authorised request through the shim")
	}
	if !strings.Contains(after["plugin:pl:ex"][1], "Connected") {
		t.Errorf("plugin server: %v", after["plugin:pl:ex"])
	}
	get := c.run(c.claude, "mcp", "get", "ex-user")
	if !strings.Contains(get, "Command: "+c.heal) || !strings.Contains(get, "EXAMPLE_SECRET=") {
		t.Errorf("claude mcp get ex-user:\n%s", get)
	}
	// The project server runs through a local copy, which Claude Code
	// prefers (claude mcp list above runs the shim for it); .mcp.json,
	// shared with a team, is untouched. Claude Code 2.1.328 notes the
	// same name in two scopes under "MCP config diagnostics" ("Conflicting
	// scopes"), and nothing else.
	if got, _ := os.ReadFile(mcpJSON); !bytes.Equal(got, origProject) {
		t.Errorf("wrap --all rewrote .mcp.json:\n%s", wrap.Diff(".mcp.json", origProject, got))
	}
	if strings.Contains(c.lastList, "Conflicting scopes") && !strings.Contains(c.lastList, `Server "ex-project" is defined in multiple scopes`) {
		t.Errorf("claude mcp list reports a conflict for another server than ex-project:\n%s", c.lastList)
	}
	var live []claudecfg.Server
	servers, _ = claudecfg.Discover(o)
	for _, s := range servers {
		if s.Shadowed {
			if s.Name != "ex-project" || s.Scope != claudecfg.ScopeProject || s.Wrapped {
				t.Errorf("shadowed after wrap: %+v", s)
			}
			continue
		}
		live = append(live, s)
		if s.Scope != claudecfg.ScopePlugin && (!s.Wrapped || s.Shim != c.heal) {
			t.Errorf("%s: not seen as wrapped: %+v", s.Name, s)
		}
	}
	if len(live) != len(found) {
		t.Errorf("Discover after wrap: %d servers in use, want %d", len(live), len(found))
	}
	var st struct {
		Servers []struct {
			Name    string `json:"name"`
			Wrapped bool   `json:"wrapped"`
			Command string `json:"command"`
		} `json:"servers"`
	}
	// A project server wrap protects with a local copy is one row: the
	// shadowed .mcp.json entry is not shown a second time.
	if err := json.Unmarshal([]byte(c.run(c.heal, "status", "--json")), &st); err != nil || len(st.Servers) != len(found) {
		t.Errorf("status --json: %v %+v", err, st)
	}
	seen := map[string]bool{}
	for _, s := range st.Servers {
		if seen[s.Name] {
			t.Errorf("status --json: %s shown twice: %+v", s.Name, st)
		}
		seen[s.Name] = true
	}

	c.run(c.heal, "unwrap", "--all")
	gotGlobal, _ := os.ReadFile(global)
	gotProject, _ := os.ReadFile(mcpJSON)
	if !bytes.Equal(gotProject, origProject) {
		t.Errorf(".mcp.json not restored:\n%s", wrap.Diff(".mcp.json", origProject, gotProject))
	}
	// Claude Code itself rewrites other keys of ~/.claude.json as it runs;
	// the server objects must be back byte for byte.
	if got := gjson.GetBytes(gotGlobal, "mcpServers").Raw; got != userRaw {
		t.Errorf("user servers not restored:\n%s", wrap.Diff("user", []byte(userRaw), []byte(got)))
	}
	if got := gjson.GetBytes(gotGlobal, "projects."+gjson.Escape(c.proj)+".mcpServers").Raw; got != localRaw {
		t.Errorf("local servers not restored:\n%s", wrap.Diff("local", []byte(localRaw), []byte(got)))
	}
	final := c.list()
	for n, v := range final {
		if strings.Contains(v[0], " shim ") || !strings.Contains(v[1], "Connected") {
			t.Errorf("%s after unwrap: %v", n, v)
		}
	}
}

func trust(t *testing.T, global, proj string) {
	t.Helper()
	b, err := os.ReadFile(global)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["projects"].(map[string]any)[proj].(map[string]any)["hasTrustDialogAccepted"] = true
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(global, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
