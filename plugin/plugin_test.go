// Package plugin_test checks the Claude Code plugin bundle (manifest,
// marketplace, hooks.json, the /mcp-heal command and the launcher) with the
// real claude CLI and real processes.
package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/e2e"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// claudeEnv is the environment the real claude CLI runs in: a throwaway HOME
// and no network traffic of its own. The Go caches stay the real ones so the
// launcher's go build does not download or compile the world again.
func claudeEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
	return append(env, testenv.GoEnv("GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOPROXY", "GOFLAGS")...)
}

// noGoEnv is claudeEnv with a PATH that has no Go on it: a released
// plugin's launcher must not need it.
func noGoEnv(home string) []string {
	return withPath(claudeEnv(home), "/usr/bin:/bin") // no Go
}

// withPath is env with its PATH set to path.
func withPath(env []string, path string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + path
		}
	}
	return env
}

// launcher is the sh launcher of the plugin at root, to run with args.
func launcher(root string, args ...string) *exec.Cmd {
	return exec.Command(filepath.Join(root, "plugin", "mcp-heal"), args...)
}

// hookEnv is env with what Claude Code gives a hook of the plugin at
// root: CLAUDE_PLUGIN_ROOT, and CLAUDE_PLUGIN_DATA, home's plugin-data.
func hookEnv(env []string, root, home string) []string {
	return append(env, "CLAUDE_PLUGIN_ROOT="+root, "CLAUDE_PLUGIN_DATA="+filepath.Join(home, "plugin-data"))
}

// runZero runs cmd with stdin to its end and fails the test unless it
// exits 0; it returns its stdout and stderr.
func runZero(t *testing.T, cmd *exec.Cmd, stdin string) (stdout, stderr string) {
	t.Helper()
	cmd.Stdin = strings.NewReader(stdin)
	code, o, e := testenv.RunCode(t, cmd)
	if code != 0 {
		t.Fatalf("%s %q: exit status %d (want 0)\nstdout: %s\nstderr: %s", cmd.Path, cmd.Args[1:], code, o, e)
	}
	return o, e
}

// stableBin is the stable copy the launcher installs under home.
func stableBin(home string) string {
	return filepath.Join(home, ".local", "share", "mcp-heal", "bin", "mcp-heal")
}

// binVersion is what the binary at path prints for `version`.
func binVersion(path string) (string, error) { return output(nil, path, "version") }

// output is what the program at path prints on stdout, run with args in
// env (nil: the test's own).
func output(env []string, path string, args ...string) (string, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	out, err := cmd.Output()
	return string(out), err
}

func runClaude(t *testing.T, claude, home, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(claude, args...)
	cmd.Env = claudeEnv(home)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestValidateStrict: `claude plugin validate --strict` passes on the repo
// with no error, no warning and no plugin-directory finding.
func TestValidateStrict(t *testing.T) {
	unixOnly(t, shLauncher)
	claude := testenv.NPMBin(t, "claude", testenv.ClaudeCode)
	root := testenv.ModuleRoot(t)
	out := runClaude(t, claude, t.TempDir(), root, "plugin", "validate", "--strict", "--json", root)
	var res struct {
		Success  bool `json:"success"`
		Manifest struct {
			Errors   []json.RawMessage `json:"errors"`
			Warnings []json.RawMessage `json:"warnings"`
		} `json:"manifest"`
		Contents []struct {
			Errors   []json.RawMessage `json:"errors"`
			Warnings []json.RawMessage `json:"warnings"`
		} `json:"contents"`
		Directory struct {
			Findings []struct {
				Code     string `json:"code"`
				Severity string `json:"severity"`
			} `json:"findings"`
		} `json:"directory"`
	}
	i := strings.Index(out, "{")
	if i < 0 || json.Unmarshal([]byte(out[i:]), &res) != nil {
		t.Fatalf("validate --json output is not JSON:\n%s", out)
	}
	n := len(res.Manifest.Errors) + len(res.Manifest.Warnings) + len(res.Directory.Findings)
	for _, c := range res.Contents {
		n += len(c.Errors) + len(c.Warnings)
	}
	if !res.Success || n != 0 {
		t.Fatalf("validate --strict: success=%v with %d errors, warnings or findings, want none\n%s", res.Success, n, out)
	}
	// The text form says so too.
	text := runClaude(t, claude, t.TempDir(), root, "plugin", "validate", "--strict", root)
	if strings.Contains(text, "⚠") || !strings.Contains(text, "Validation passed") {
		t.Fatalf("validate --strict text output has warnings:\n%s", text)
	}
}

// TestInstallFromLocalMarketplace installs the plugin the way the README
// says, from the repo as a local marketplace, in a throwaway HOME, then
// runs the installed launcher as Claude Code would run a hook: it builds the
// binary from the installed copy's source into ${CLAUDE_PLUGIN_DATA} in the
// background (saying so), installs the stable copy, and answers the hook.
func TestInstallFromLocalMarketplace(t *testing.T) {
	unixOnly(t, shLauncher)
	claude := testenv.NPMBin(t, "claude", testenv.ClaudeCode)
	root := testenv.ModuleRoot(t)
	home := t.TempDir()
	runClaude(t, claude, home, home, "plugin", "marketplace", "add", root)
	runClaude(t, claude, home, home, "plugin", "install", "mcp-heal@mcp-heal")
	out := runClaude(t, claude, home, home, "plugin", "list", "--json")
	var list []struct {
		ID          string `json:"id"`
		Version     string `json:"version"`
		Enabled     bool   `json:"enabled"`
		InstallPath string `json:"installPath"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &list); err != nil {
		t.Fatalf("plugin list --json: %v\n%s", err, out)
	}
	if len(list) != 1 || list[0].ID != "mcp-heal@mcp-heal" || !list[0].Enabled {
		t.Fatalf("plugin list: got %s, want mcp-heal@mcp-heal enabled", out)
	}
	inst := list[0].InstallPath
	for _, f := range []string{".claude-plugin/plugin.json", "hooks/hooks.json", "commands/mcp-heal.md", "plugin/mcp-heal", "go.mod", "cmd/mcp-heal/main.go"} {
		if _, err := os.Stat(filepath.Join(inst, f)); err != nil {
			t.Fatalf("installed plugin lacks %s: %v", f, err)
		}
	}

	data := filepath.Join(home, ".claude", "plugins", "data", "mcp-heal-mcp-heal")
	payload, err := os.ReadFile(filepath.Join(testenv.HookPayloadDir(t), "PostToolUseFailure.stdio-not-connected.json"))
	if err != nil {
		t.Fatal(err)
	}
	hook := func() (string, string) {
		cmd := launcher(inst, "hook", "PostToolUseFailure")
		cmd.Env = append(claudeEnv(home), "CLAUDE_PLUGIN_ROOT="+inst, "CLAUDE_PLUGIN_DATA="+data, "CLAUDE_PROJECT_DIR="+home)
		cmd.Dir = home
		return runZero(t, cmd, string(payload))
	}
	// The first hook starts the build in the background and says so; the
	// call passes through. Once the build is there, hooks answer.
	if out, _ := hook(); !strings.Contains(out, "building its binary from source") {
		t.Fatalf("first hook of a source install: got %q, want the one line saying it builds", out)
	}
	waitBuilt(t, data, "mcp-heal-0.1.0", 10*time.Minute)
	out, errOut := hook()
	var reply struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &reply); err != nil || !strings.Contains(reply.HookSpecificOutput.AdditionalContext, "/mcp reconnect tiny") {
		t.Fatalf("installed hook reply: got %q (%v), want additionalContext naming /mcp reconnect tiny\nstderr: %s", out, err, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "bin", "mcp-heal-0.1.0")); err != nil {
		t.Fatalf("launcher did not cache its build under CLAUDE_PLUGIN_DATA: %v", err)
	}
	stable := stableBin(home)
	if out, err := binVersion(stable); err != nil || !strings.HasPrefix(string(out), "mcp-heal 0.1.0") {
		t.Fatalf("stable copy %s version: got %q, %v; want mcp-heal 0.1.0", stable, out, err)
	}
}

// TestOneHooksFileForEveryPlatform holds the Windows design of
// docs/install.md in place. There is no per-OS command in hooks.json, so
// every hook runs "${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal" in exec form
// (args present): no shell, so the same line works with Git Bash, with
// PowerShell only, and on unix without a shell's start-up cost before
// every MCP call. The name has no extension: on Windows, Claude Code's
// spawn (libuv) tries it with .com, then .exe, appended, which finds the
// Windows launcher the release puts beside the sh script
// (release.WindowsLauncher). A shell form, a .sh name or an extension
// would break one platform or the other.
func TestOneHooksFileForEveryPlatform(t *testing.T) {
	root := ".." // tests run in the package directory: no go needed (Wine, Windows)
	b, err := os.ReadFile(filepath.Join(root, "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string    `json:"type"`
				Command string    `json:"command"`
				Args    *[]string `json:"args"`
				Shell   string    `json:"shell"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &hooks); err != nil {
		t.Fatal(err)
	}
	n := 0
	for event, ms := range hooks.Hooks {
		for _, m := range ms {
			for _, h := range m.Hooks {
				n++
				if h.Type != "command" || h.Command != "${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal" || h.Args == nil || h.Shell != "" {
					t.Errorf("%s hook: type %q command %q args %v shell %q; want exec form of ${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal", event, h.Type, h.Command, h.Args, h.Shell)
				}
				if h.Args != nil && (len(*h.Args) != 2 || (*h.Args)[0] != "hook" || (*h.Args)[1] != event) {
					t.Errorf("%s hook: args %q, want [hook %s]", event, *h.Args, event)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("hooks.json has no hooks")
	}
	// The command's `!` line runs in the Bash tool (Git Bash on Windows)
	// or, without Git Bash, the PowerShell tool: both are allowed the one
	// line, which names the same extensionless launcher.
	cmd, err := os.ReadFile(filepath.Join(root, "commands", "mcp-heal.md"))
	if err != nil {
		t.Fatal(err)
	}
	const line = "${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal command"
	for _, want := range []string{"Bash(" + line + ":*)", "PowerShell(" + line + ":*)", "!`" + line + " $ARGUMENTS`"} {
		if !strings.Contains(string(cmd), want) {
			t.Errorf("commands/mcp-heal.md lacks %s", want)
		}
	}
}

// TestSlashCommandInPrintMode runs `claude -p "/mcp-heal doctor tiny"` with
// the plugin loaded (--plugin-dir) against a stand-in model: the command's
// `!` line must run without a permission prompt, and its report must reach
// the model together with the request to present it.
func TestSlashCommandInPrintMode(t *testing.T) {
	unixOnly(t, shLauncher)
	claude := testenv.NPMBin(t, "claude", testenv.ClaudeCode)
	bin := testenv.Binary(t)
	root := testenv.ModuleRoot(t)
	home := t.TempDir()
	work := filepath.Join(home, "project")
	os.MkdirAll(work, 0o755)
	cfg := fmt.Sprintf(`{"mcpServers":{"tiny":{"command":%q,"args":["example-server"]}}}`, bin)
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// doctor reads the config Claude Code reads: the user scope.
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := e2e.NewModel(e2e.Turn{Text: "tiny is healthy."})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "/mcp-heal doctor tiny", "--output-format", "json",
		"--mcp-config", filepath.Join(home, "mcp.json"), "--plugin-dir", root)
	cmd.Dir = work
	cmd.Env = append(claudeEnv(home), "ANTHROPIC_BASE_URL="+m.URL, "ANTHROPIC_API_KEY=sk-fake", "ENABLE_TOOL_SEARCH=false", "MCP_HEAL_BIN="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p /mcp-heal: %v\n%s", err, out)
	}
	var prompt string
	for _, r := range m.Main() {
		for _, msg := range r.Messages {
			for _, b := range msg.Content {
				prompt += b.Text + "\n"
			}
		}
	}
	for _, want := range []string{"answers: mcp-heal-example", "Present this report to the user"} {
		if !strings.Contains(prompt, want) {
			t.Fatalf("the model's prompt lacks %q:\n%s\nclaude output: %s", want, prompt, out)
		}
	}
	if !strings.Contains(string(out), "tiny is healthy.") {
		t.Fatalf("claude output lacks the model's answer: %s", out)
	}
}

// TestLauncherCommandNamesSlashCommands: run as /mcp-heal (the launcher's
// `command` entry), the binary's advice names what the user can run inside
// Claude Code: `/mcp-heal wrap X`, not an `mcp-heal` binary they may not
// have on PATH. Run directly, the same advice names the binary.
func TestLauncherCommandNamesSlashCommands(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	bin := testenv.Binary(t)
	t.Setenv("MCP_HEAL_BIN", bin)
	proj := filepath.Join(l.home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers":{"tiny":{"command":"` + bin + `","args":["example-server"]}}}`
	if err := os.WriteFile(filepath.Join(l.home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+l.home, "XDG_STATE_HOME="+filepath.Join(l.home, "state"), "CLAUDE_PROJECT_DIR="+proj)

	cmd := launcher(l.root, "command", "status")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Run '/mcp-heal wrap --all'") {
		t.Errorf("/mcp-heal status: %v\n%s", err, out)
	}
	cmd = exec.Command(bin, "status")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Run 'mcp-heal wrap --all'") {
		t.Errorf("mcp-heal status in a shell: %v\n%s", err, out)
	}
}
