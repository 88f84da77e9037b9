//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/testenv/fakeshim"
)

// cfgEnv is a throwaway home and project for the config commands, with
// XDG_STATE_HOME (backups, shim records, incidents) pointed inside it.
type cfgEnv struct {
	t                *testing.T
	home, proj, dots string
	vars             map[string]string
}

func newCfgEnv(t *testing.T) *cfgEnv {
	t.Helper()
	base := t.TempDir()
	c := &cfgEnv{t: t, home: filepath.Join(base, "home"), proj: filepath.Join(base, "wörk", "proj"), dots: filepath.Join(base, "dotfiles")}
	for _, d := range []string{c.home, c.proj, c.dots} {
		os.MkdirAll(d, 0o755)
	}
	testenv.UseStateDir(t, filepath.Join(base, "state"))
	c.vars = map[string]string{"HOME": c.home, "CLAUDE_PROJECT_DIR": c.proj, "XDG_DATA_HOME": filepath.Join(base, "data")}
	// The in-process run finds the stable copy through the process's own
	// environment (paths.Current): a stable copy in the real user's data
	// directory must not decide what these tests see.
	t.Setenv("XDG_DATA_HOME", c.vars["XDG_DATA_HOME"])
	// ~/.claude.json is a symlink into a dotfiles folder, mode 0600.
	global := filepath.Join(c.dots, "claude.json")
	c.write(global, `{
  "numStartups": 12,
  "mcpServers": {
    "mem": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-memory",
        "--api-key=sk-live-abcdef1234567890"
      ],
      "env": {
        "MEMORY_FILE": "/tmp/m.json"
      }
    },
    "api": {
      "type": "http",
      "url": "https://mcp.example.com/mcp",
      "headers": {
        "Authorization": "Bearer very-secret"
      }
    }
  },
  "projects": {
    "`+c.proj+`": {
      "allowedTools": [],
      "mcpServers": {
        "local-one": {
          "type": "stdio",
          "command": "/usr/local/bin/thing",
          "args": [],
          "env": {}
        }
      },
      "hasTrustDialogAccepted": true,
      "enabledMcpjsonServers": ["proj-srv"]
    }
  }
}
`, 0o600)
	if err := os.Symlink(global, filepath.Join(c.home, ".claude.json")); err != nil {
		t.Fatal(err)
	}
	c.write(filepath.Join(c.proj, ".mcp.json"), "{\n  \"mcpServers\": {\n    \"proj-srv\": {\n      \"command\": \"python3\",\n      \"args\": [\"-m\", \"srv\"]\n    }\n  }\n}\n", 0o644)
	return c
}

func (c *cfgEnv) write(path, data string, mode os.FileMode) {
	c.t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cfgEnv) run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return c.vars[k] }}
	code = run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// snapshot reads every config file.
func (c *cfgEnv) snapshot() map[string]string {
	m := map[string]string{}
	for _, p := range []string{filepath.Join(c.dots, "claude.json"), filepath.Join(c.proj, ".mcp.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			c.t.Fatal(err)
		}
		m[p] = string(b)
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestWrapUnwrapCommands(t *testing.T) {
	c := newCfgEnv(t)
	orig := c.snapshot()

	code, out, errs := c.run("wrap", "--all", "--dry-run", "--shim", "/opt/mh/mcp-heal")
	if code != 0 || !strings.Contains(out, "--- ~/.claude.json") || !strings.Contains(out, "+      \"command\": \"/opt/mh/mcp-heal\",") || !strings.Contains(out, "dry run: nothing was written") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Fatal("--dry-run changed a file")
	}
	if strings.Contains(out, "very-secret\"\n+      \"args\"") {
		t.Fatal("secret in args")
	}

	code, out, errs = c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	for _, want := range []string{"local-one: wrapped (local, ~/.claude.json)", "proj-srv: wrapped (project, " + filepath.Join(c.proj, ".mcp.json") + "): by a local entry of the same name", "mem: wrapped (user", "api: wrapped (user", "Restart Claude Code", "Note: keep both entries when /mcp warns"} {
		if !strings.Contains(out, want) {
			t.Fatalf("wrap: exit %d, output lacks %q:\n%s\n%s", code, want, out, errs)
		}
	}
	if !strings.Contains(errs, "backup of ~/.claude.json: ") {
		t.Fatalf("no backup named: %s", errs)
	}
	wrapped := c.snapshot()
	if fi, err := os.Lstat(filepath.Join(c.home, ".claude.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("~/.claude.json is no longer a symlink")
	}
	if fi, _ := os.Stat(filepath.Join(c.dots, "claude.json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(c.dots); len(ents) != 1 {
		t.Fatalf("temp files left: %v", ents)
	}

	// Twice = once.
	code, out, _ = c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	if code != 0 || strings.Contains(out, ": wrapped") || !equalMaps(c.snapshot(), wrapped) {
		t.Fatalf("second wrap: exit %d\n%s", code, out)
	}

	// status sees them wrapped, with no secret in sight.
	code, out, _ = c.run("status")
	if code != 0 || strings.Contains(out, "very-secret") || strings.Contains(out, "/tmp/m.json") || strings.Contains(out, "abcdef1234567890") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	for _, n := range []string{"mem", "api", "local-one", "proj-srv"} {
		if !regexpMatch(`(?m)^`+n+` +\S+ +\S+ +yes `, out) {
			t.Fatalf("status does not show %s wrapped:\n%s", n, out)
		}
	}

	code, out, errs = c.run("unwrap", "--all")
	if code != 0 || !strings.Contains(out, "mem: unwrapped") {
		t.Fatalf("unwrap: exit %d\n%s\n%s", code, out, errs)
	}
	if got := c.snapshot(); !equalMaps(got, orig) {
		t.Fatalf("unwrap did not restore the files byte for byte:\n%v\n%v", got, orig)
	}
}

func TestWrapScopeAndNames(t *testing.T) {
	c := newCfgEnv(t)
	code, out, errs := c.run("wrap", "--scope", "user", "mem", "--shim", "/opt/mh/mcp-heal")
	if code != 0 || !strings.Contains(out, "mem: wrapped (user") || strings.Contains(out, "api") || strings.Contains(out, "local-one") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = c.run("unwrap", "--scope", "project", "--all")
	if code != 0 || !strings.Contains(out, "proj-srv: not wrapped") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestWrapUsageErrors(t *testing.T) {
	c := newCfgEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"wrap"}, 2, "no servers named"},
		{[]string{"wrap", "--all", "mem"}, 2, "not both"},
		{[]string{"wrap", "--scope", "global", "--all"}, 2, `unknown scope "global"`},
		{[]string{"wrap", "--shim", "/opt/mh/mcp-heal", "nosuch"}, 2, `no server named "nosuch"`},
		{[]string{"unwrap", "plugin:x:y"}, 2, "plugin-provided servers cannot be wrapped"},
	} {
		orig := c.snapshot()
		code, out, errs := c.run(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", tc.args, code, tc.code, tc.want, out, errs)
		}
		if !equalMaps(c.snapshot(), orig) {
			t.Errorf("%v changed a file", tc.args)
		}
	}
	// The test binary, like `go run`, lives in a temporary go-build
	// directory: wrap will not point entries at it.
	if code, _, errs := c.run("wrap", "--all"); code != 2 || !strings.Contains(errs, "temporary 'go run' build") {
		t.Errorf("wrap without --shim from a go-build binary: exit %d\n%s", code, errs)
	}
	// A preview without names shows every server and writes nothing.
	orig := c.snapshot()
	if code, out, errs := c.run("wrap", "--dry-run", "--shim", "/opt/mh/mcp-heal"); code != 0 || !strings.Contains(out, "/opt/mh/mcp-heal") {
		t.Errorf("wrap --dry-run without names: exit %d\n%s%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Errorf("wrap --dry-run changed a file")
	}
	code, out, _ := c.run("wrap", "--help")
	if code != 0 || !strings.Contains(out, "Usage: mcp-heal wrap") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func TestWrapRefusesBrokenConfig(t *testing.T) {
	c := newCfgEnv(t)
	bad := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}\n"
	mcpJSON := filepath.Join(c.proj, ".mcp.json")
	c.write(mcpJSON, bad, 0o644)
	orig := c.snapshot()
	code, out, errs := c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	if code != 1 || !strings.Contains(errs, mcpJSON+":4:5: invalid JSON") || !strings.Contains(errs, "nothing was changed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !equalMaps(c.snapshot(), orig) {
		t.Fatal("a file changed although one config was broken")
	}
}

// TestWrapProjectServers: wrap --all never rewrites a shared .mcp.json by
// default. An approved project server gets a local copy (which Claude Code
// prefers), a pending one is skipped, a change to .mcp.json is reported by
// status and doctor and refreshed by the next wrap, unwrap removes the
// copy; rewriting .mcp.json needs --project-servers rewrite, and a dry run
// prints every note the real run does.
func TestWrapProjectServers(t *testing.T) {
	c := newCfgEnv(t)
	mcpJSON := filepath.Join(c.proj, ".mcp.json")
	c.write(mcpJSON, "{\n  \"mcpServers\": {\n    \"proj-srv\": {\n      \"command\": \"python3\",\n      \"args\": [\"-m\", \"srv\"]\n    },\n    \"unapproved\": {\"command\": \"evil\"}\n  }\n}\n", 0o644)
	orig := c.snapshot()
	shared := orig[mcpJSON]

	dry, dryOut, _ := c.run("wrap", "--all", "--dry-run", "--shim", "/opt/mh/mcp-heal")
	code, out, errs := c.run("wrap", "--all", "--shim", "/opt/mh/mcp-heal")
	if dry != 0 || code != 0 {
		t.Fatalf("wrap: exit %d/%d\n%s%s", dry, code, out, errs)
	}
	for _, want := range []string{
		"proj-srv: wrapped (project, " + mcpJSON + "): by a local entry of the same name, which Claude Code prefers; .mcp.json is not changed",
		"unapproved: skipped (project, " + mcpJSON + "): approve it, then wrap it: not approved in Claude Code (pending)",
		"Note: keep both entries when /mcp warns",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("wrap output lacks %q:\n%s", want, out)
		}
	}
	if got := c.snapshot()[mcpJSON]; got != shared {
		t.Fatalf(".mcp.json was rewritten:\n%s", got)
	}
	if notes(dryOut) != notes(out) || notes(out) == "" {
		t.Errorf("the dry run's notes differ from the real run's:\n%s\n---\n%s", notes(dryOut), notes(out))
	}

	// status: the copy runs, shown once; the .mcp.json entry it stands
	// for is not a second row, and Claude Code's warning about the two
	// is answered; right after wrap nothing runs it yet, and status says
	// why.
	code, out, _ = c.run("status")
	if code != 0 || !regexpMatch(`(?m)^proj-srv +local +stdio +yes +unknown `, out) || strings.Count(out, "\nproj-srv ") != 1 || strings.Contains(out, "out of date") ||
		!strings.Contains(out, `proj-srv: protects the entry of the same name in `+mcpJSON) || !strings.Contains(out, `"[Conflicting scopes]" warning about it is expected: keep both entries`) ||
		!strings.Contains(out, "proj-srv: restart Claude Code, or run /mcp reconnect proj-srv in Claude Code: no shim running (not started since it was wrapped, or no session runs it)") {
		t.Fatalf("status after wrap: exit %d\n%s", code, out)
	}

	// A teammate changes the entry: status and doctor say so, wrap refreshes.
	c.write(mcpJSON, strings.Replace(shared, `"srv"]`, `"srv", "--new-flag"]`, 1), 0o644)
	if _, out, _ = c.run("status"); !strings.Contains(out, "proj-srv: run mcp-heal wrap proj-srv: changed in "+mcpJSON+" since mcp-heal copied it; Claude Code still runs the old copy until it is wrapped again") {
		t.Errorf("status does not report the drift:\n%s", out)
	}
	if _, out, _ = c.run("doctor", "proj-srv", "--timeout", "1s"); !strings.Contains(out, "hint: run mcp-heal wrap proj-srv: changed in "+mcpJSON) {
		t.Errorf("doctor does not report the drift:\n%s", out)
	}
	if _, out, _ = c.run("wrap", "proj-srv", "--shim", "/opt/mh/mcp-heal"); !strings.Contains(out, "proj-srv: refreshed (project") {
		t.Errorf("wrap after the change:\n%s", out)
	}
	if _, out, _ = c.run("status"); strings.Contains(out, "since mcp-heal copied it") || !strings.Contains(out, "--new-flag") {
		t.Errorf("status after the refresh:\n%s", out)
	}

	// unwrap --scope project removes the copy too.
	if code, out, _ = c.run("unwrap", "--scope", "project", "proj-srv"); code != 0 || !strings.Contains(out, "proj-srv: unwrapped (project") || strings.Contains(out, "not wrapped") {
		t.Errorf("unwrap --scope project: exit %d\n%s", code, out)
	}
	if _, out, _ = c.run("status"); regexpMatch(`(?m)^proj-srv +local `, out) {
		t.Errorf("the copy is still there after unwrap --scope project:\n%s", out)
	}
	c.run("wrap", "proj-srv", "--shim", "/opt/mh/mcp-heal")

	// unwrap removes the copy; ~/.claude.json is as before.
	// One server, one line: the copy's unwrap is the server's (issue 32:
	// "not wrapped (project, ...)" after it read as a failure).
	if code, out, errs = c.run("unwrap", "--all"); code != 0 || !strings.Contains(out, "proj-srv: unwrapped (local") || strings.Count(out, "proj-srv: ") != 1 {
		t.Fatalf("unwrap: exit %d\n%s%s", code, out, errs)
	}
	global := filepath.Join(c.dots, "claude.json")
	if got := c.snapshot()[global]; got != orig[global] {
		t.Errorf("unwrap left ~/.claude.json different:\n%s\nwant\n%s", got, orig[global])
	}

	// Rewriting .mcp.json is explicit, and says what it means, dry or not.
	shared = c.snapshot()[mcpJSON]
	dry, dryOut, _ = c.run("wrap", "--all", "--project-servers", "rewrite", "--dry-run", "--shim", "/opt/mh/mcp-heal")
	code, out, _ = c.run("wrap", "--all", "--project-servers", "rewrite", "--shim", "/opt/mh/mcp-heal")
	if dry != 0 || code != 0 || !strings.Contains(out, "Note: keep .mcp.json out of commits") || notes(dryOut) != notes(out) {
		t.Errorf("--project-servers rewrite: exit %d\n%s\n---dry run:\n%s", code, out, dryOut)
	}
	if got := c.snapshot()[mcpJSON]; !strings.Contains(got, "/opt/mh/mcp-heal") {
		t.Errorf(".mcp.json not rewritten with --project-servers rewrite:\n%s", got)
	}
	c.run("unwrap", "--all")
	if code, out, _ = c.run("wrap", "--all", "--project-servers", "skip", "--shim", "/opt/mh/mcp-heal"); code != 0 || !strings.Contains(out, "Note: protect project (.mcp.json) servers with --project-servers local") || c.snapshot()[mcpJSON] != shared {
		t.Errorf("--project-servers skip: exit %d\n%s", code, out)
	}
	if code, _, errs := c.run("wrap", "--all", "--project-servers", "sometimes"); code != 2 || !strings.Contains(errs, `unknown --project-servers "sometimes"`) {
		t.Errorf("bad --project-servers: exit %d %s", code, errs)
	}
}

// notes returns the Note lines of wrap's output.
func notes(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Note: ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestStatuslineSetup: /mcp-heal statusline (the launcher sets
// MCP_HEAL_CONTEXT) prints the settings lines; --install adds them to
// ~/.claude/settings.json, says so the second time, and leaves a
// statusLine of the user's own as it is, printing a command that shows
// both (exit 1).
// TestStatuslineLineNowAfterClear: /mcp-heal statusline inside a session
// prints the session's line now, from the shims of its id or of its
// Claude Code ($CLAUDE_PID): after /clear (a new id, the same servers) the
// line is still the session's, as the status line itself shows it.
func TestStatuslineLineNowAfterClear(t *testing.T) {
	home := testenv.TempDir(t)
	stateDir := testenv.UseStateDir(t, filepath.Join(home, "state"))
	claude := testenv.StartProcess(t, "sleep", "60")
	shim := testenv.StartProcess(t, "sleep", "60")
	fakeshim.WriteRecord(t, state.Record{Server: "notes", Session: "before-clear", ClaudePID: claude.Process.Pid, ShimPID: shim.Process.Pid, Mode: state.ModeStdio, State: state.Running, ChildPID: 1, Started: time.Now()})
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + stateDir, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "MCP_HEAL_CONTEXT=claude-code", "CLAUDE_CODE_SESSION_ID=after-clear"}
	if _, out, _ := testenv.RunBinary(t, append(env, "CLAUDE_PID="+strconv.Itoa(claude.Process.Pid)), "", "", "statusline"); !strings.Contains(out, "This session's line now: MCP 1/1 ok") {
		t.Errorf("after /clear, under the same Claude Code: %s", out)
	}
	if _, out, _ := testenv.RunBinary(t, env, "", "", "statusline"); !strings.Contains(out, "This session's line is empty now") {
		t.Errorf("another session, no Claude Code pid: %s", out)
	}
}

func TestStatuslineSetup(t *testing.T) {
	bin := testenv.Binary(t)
	home := testenv.TempDir(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_DATA_HOME=" + filepath.Join(home, "data")}
	run := func(args ...string) (int, string, string) {
		return testenv.RunBinary(t, append(env, "MCP_HEAL_CONTEXT=claude-code"), "", "", args...)
	}
	settings := filepath.Join(home, ".claude", "settings.json")
	// What /mcp-heal statusline runs: the plugin's launcher, whose
	// "command" sets MCP_HEAL_CONTEXT; stdin is not the payload's pipe.
	launcher := exec.Command(filepath.Join(testenv.ModuleRoot(t), "plugin", "mcp-heal"), "command", "statusline")
	launcher.Env = append(env, "MCP_HEAL_BIN="+bin)
	launcher.Stdin = strings.NewReader("")
	if out, err := launcher.CombinedOutput(); err != nil || !strings.Contains(string(out), `"statusLine": {`) || !strings.HasPrefix(string(out), "Run /mcp-heal statusline --install") {
		t.Fatalf("/mcp-heal statusline through the launcher: %v\n%s", err, out)
	}
	code, out, errs := run("statusline")
	if code != 0 || !strings.Contains(out, `"command": "`+bin+` statusline"`) || !strings.HasPrefix(out, "Run /mcp-heal statusline --install to show") {
		t.Fatalf("statusline from /mcp-heal: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(settings); err == nil {
		t.Fatal("printing the lines wrote the settings file")
	}
	code, out, errs = run("statusline", "--install")
	b, _ := os.ReadFile(settings)
	if code != 0 || !strings.Contains(out, "Added the statusLine to "+settings) || gjson.GetBytes(b, "statusLine.command").String() != bin+" statusline" {
		t.Fatalf("--install: exit %d\n%s%s\nfile: %s", code, out, errs, b)
	}
	if code, out, _ = run("statusline", "--install"); code != 0 || !strings.Contains(out, "already runs mcp-heal's status line") {
		t.Errorf("--install again: exit %d\n%s", code, out)
	}
	if code, out, _ = run("statusline"); code != 0 || !strings.Contains(out, "Claude Code's status line shows this session's MCP health: it runs\n  "+bin+" statusline") {
		t.Errorf("statusline once installed: exit %d\n%s", code, out)
	}

	mine := `{"statusLine":{"type":"command","command":"~/ps1.sh"},"model":"opus"}`
	os.WriteFile(settings, []byte(mine), 0o600)
	code, out, _ = run("statusline", "--install")
	if b, _ := os.ReadFile(settings); string(b) != mine {
		t.Fatalf("the user's statusLine was changed: %s", b)
	}
	i := strings.Index(out, "set its \"command\" to this JSON string:\n")
	if code != 1 || i < 0 || !strings.Contains(out, "mcp-heal does not replace") {
		t.Fatalf("--install over the user's own: exit %d\n%s", code, out)
	}
	var combined string
	rest := out[i+len("set its \"command\" to this JSON string:\n"):]
	if err := json.Unmarshal([]byte(strings.TrimSpace(rest[:strings.IndexByte(rest, '\n')])), &combined); err != nil ||
		!strings.Contains(combined, "~/ps1.sh") || !strings.HasSuffix(combined, bin+" statusline") {
		t.Errorf("the combined command: %v %q", err, combined)
	}
	if code, out, _ := run("statusline", "extra"); code != 2 {
		t.Errorf("an argument: exit %d %s", code, out)
	}
}
