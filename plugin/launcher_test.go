package plugin_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// launcherEnv runs plugin/mcp-heal as Claude Code runs a hook: plugin root
// and data dir set, a throwaway HOME; path is PATH.
type launcherEnv struct {
	root, data, home, path string
}

func newLauncherEnv(t *testing.T) *launcherEnv {
	home := t.TempDir()
	return &launcherEnv{root: testenv.ModuleRoot(t), data: filepath.Join(home, "plugin-data"), home: home, path: os.Getenv("PATH")}
}

func (l *launcherEnv) stable() string { return stableBin(l.home) }

func (l *launcherEnv) run(t *testing.T, stdin []byte, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := launcher(l.root, args...)
	cmd.Env = hookEnv(withPath(claudeEnv(l.home), l.path), l.root, l.home)
	cmd.Dir = l.home
	return runZero(t, cmd, string(stdin))
}

// waitBuilt waits until the launcher's background build has left name in
// the plugin data dir data's bin/, and fails when it has not within; a
// failed test shows the build's log.
func waitBuilt(t *testing.T, data, name string, within time.Duration) {
	t.Helper()
	bin := filepath.Join(data, "bin")
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(bin, "build.log"))
			t.Logf("build.log:\n%s", log)
		}
	})
	testenv.WaitFor(t, within, "the background build of "+name, func() bool {
		_, err := os.Stat(filepath.Join(bin, name))
		return err == nil
	})
}

func pluginVersion(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := strings.Cut(string(b), `"version": "`)
	v, _, _ = strings.Cut(v, `"`)
	return v
}

// TestLauncherBuildsOnceConcurrently: with nothing built yet, several
// launchers start at once (as hooks do); one builds into
// ${CLAUDE_PLUGIN_DATA} through a temporary file, the others wait (the
// command) or let the call through (hooks); all exit 0; afterwards there is
// one binary of the plugin's version, the stable copy, and no leftovers.
func TestLauncherBuildsOnceConcurrently(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	ver := pluginVersion(t)
	pre, err := os.ReadFile(filepath.Join(testenv.HookPayloadDir(t), "PreToolUse.mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, 6)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				outs[i], _ = l.run(t, nil, "version")
			} else {
				outs[i], _ = l.run(t, pre, "hook", "PreToolUse")
			}
		}()
	}
	wg.Wait()
	for i, out := range outs {
		if i%2 == 0 && !strings.HasPrefix(out, "mcp-heal "+ver) {
			t.Errorf("launcher version: got %q, want mcp-heal %s", out, ver)
		}
		if i%2 == 1 && out != "" {
			t.Errorf("launcher hook PreToolUse: got %q, want nothing", out)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(l.data, "bin"))
	var names []string
	for _, e := range ents {
		if e.Name() != "build.log" && e.Name() != "paths.sh" { // the binary's paths, recorded
			names = append(names, e.Name())
		}
	}
	if strings.Join(names, ",") != "mcp-heal-"+ver {
		t.Fatalf("plugin data bin holds %v, want just mcp-heal-%s", names, ver)
	}
	if out, err := binVersion(l.stable()); err != nil || !strings.HasPrefix(out, "mcp-heal "+ver) {
		t.Fatalf("stable copy: got %q, %v", out, err)
	}
	if b, _ := os.ReadFile(l.stable() + ".version"); strings.TrimSpace(string(b)) != ver {
		t.Fatalf("stable copy version file: got %q, want %s", b, ver)
	}

	// Cached now: it runs without Go on PATH.
	l.path = "/usr/bin:/bin"
	if out, _ := l.run(t, nil, "version"); !strings.HasPrefix(out, "mcp-heal "+ver) {
		t.Fatalf("cached launcher: got %q", out)
	}
	// An old stable copy is replaced by this version.
	os.WriteFile(l.stable()+".version", []byte("0.0.1\n"), 0o644)
	os.WriteFile(l.stable(), []byte("#!/bin/sh\necho old\n"), 0o755)
	l.run(t, nil, "version")
	if out, _ := binVersion(l.stable()); !strings.HasPrefix(out, "mcp-heal "+ver) {
		t.Fatalf("stable copy not refreshed: %q", out)
	}
}

// TestLauncherFailsOpen: no binary, no Go, no mcp-heal on PATH. A hook
// exits 0, lets the call through and tells the user once; the command says
// how to install.
func TestLauncherFailsOpen(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	l.path = stubUname(t, "Linux", "x86_64") + ":/usr/bin:/bin"
	if _, err := exec.LookPath("/usr/bin/go"); err == nil {
		t.Fatalf("this test needs a PATH without go, but /usr/bin/go exists")
	}
	payload := []byte(`{"hook_event_name":"SessionStart"}`)
	out, _ := l.run(t, payload, "hook", "SessionStart")
	if !strings.Contains(out, `"systemMessage":"mcp-heal: install the released plugin (docs/install.md), or Go 1.26.8 or newer: this copy of the plugin has no binary for linux/amd64 and Go was not found, so mcp-heal's hooks are off.`) {
		t.Fatalf("first hook: got %q, want a systemMessage saying how to install", out)
	}
	if out, _ := l.run(t, payload, "hook", "PostToolUseFailure"); out != "" {
		t.Fatalf("second hook: got %q, want nothing (told once)", out)
	}
	_, errOut := l.run(t, nil, "command", "status")
	if !strings.Contains(errOut, "Go 1.26.8 or newer") {
		t.Fatalf("command: got stderr %q, want the install line", errOut)
	}
}

// TestLauncherCommandAlwaysExitsZero: the /mcp-heal command's `!` line is
// aborted by a non-zero exit, so `mcp-heal command` reports the status in
// its output instead.
func TestLauncherCommandAlwaysExitsZero(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	t.Setenv("MCP_HEAL_BIN", testenv.Binary(t))
	cmd := launcher(l.root, "command", "logs", "no-such-server")
	cmd.Env = append(os.Environ(), "HOME="+l.home, "XDG_STATE_HOME="+filepath.Join(l.home, "state"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("got %v, want exit 0\n%s", err, out)
	}
	if !strings.Contains(string(out), `no lifecycle log for "no-such-server"`) || !strings.Contains(string(out), "(mcp-heal logs exited with status 2)") {
		t.Fatalf("got %q", out)
	}
}

// TestLauncherPreToolUseHealthyPath: before every MCP call, with nothing in
// the attention directory, the launcher answers PreToolUse by itself (no
// output, exit 0) without starting the binary; with a marker there (a
// failed shim, a server found dead) the binary decides. The binary here is
// a script that leaves a trace and prints a reply.
func TestLauncherPreToolUseHealthyPath(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	trace := filepath.Join(l.home, "ran")
	fake := filepath.Join(l.home, "fake-mcp-heal")
	const payload = `{"hook_event_name":"PreToolUse","tool_name":"mcp__a__b","mcp_server":{"name":"a"}}`
	// `paths` is the real binary's: the launcher records its answer.
	script := "#!/bin/sh\n[ \"$1\" = paths ] && exec '" + testenv.Binary(t) + "' paths\ncat > '" + trace + "'\necho '{\"decided\":true}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCP_HEAL_BIN", fake)
	run := func(event string) string {
		cmd := launcher(l.root, "hook", event)
		cmd.Env = append(hookEnv(claudeEnv(l.home), l.root, l.home), "MCP_HEAL_BIN="+fake)
		out, _ := runZero(t, cmd, payload)
		return out
	}
	// A session starts with SessionStart, which records the paths.
	run("SessionStart")
	os.Remove(trace)
	if out := run("PreToolUse"); out != "" {
		t.Fatalf("healthy path printed %q, want nothing", out)
	}
	if _, err := os.Stat(trace); err == nil {
		t.Fatal("healthy path started the binary")
	}
	att := filepath.Join(l.home, ".local", "state", "mcp-heal", "attention")
	os.MkdirAll(att, 0o700)
	if err := os.WriteFile(filepath.Join(att, "shim-12345"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run("PreToolUse"); !strings.Contains(out, "decided") {
		t.Fatalf("with a marker: got %q, want the binary's reply", out)
	}
	got, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal("with a marker the binary did not run")
	}
	if string(got) != payload {
		t.Fatalf("the binary got the payload %q, want %q", got, payload)
	}
	// A marker's temporary file (state.MarkServer renames one into place)
	// is not a marker.
	os.Remove(filepath.Join(att, "shim-12345"))
	os.Remove(trace)
	if err := os.WriteFile(filepath.Join(att, ".server-a.77.tmp"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run("PreToolUse"); out != "" {
		t.Fatalf("with only a temporary file: got %q, want the healthy path", out)
	}
}

// TestLauncherHookBuildsInBackground: in a source checkout with Go and no
// binary yet, the first hook starts the build in the background, says so
// in one line (with the real Go requirement) and returns at once, so Claude
// Code is not held while Go compiles; hooks pass through until the binary
// is there, then use it.
func TestLauncherHookBuildsInBackground(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	payload := []byte(`{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`)
	start := time.Now()
	out, _ := l.run(t, payload, "hook", "SessionStart")
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the first hook took %v: it waited for the build", took)
	}
	if !strings.Contains(out, `"systemMessage":"mcp-heal: building its binary from source with the local Go (needs Go 1.26.8 or newer`) {
		t.Fatalf("first hook: got %q, want one line saying it builds", out)
	}
	if out, _ := l.run(t, []byte(`{}`), "hook", "PostToolUseFailure"); out != "" {
		t.Fatalf("a hook during the build: got %q, want nothing (pass through)", out)
	}
	waitBuilt(t, l.data, "mcp-heal-"+pluginVersion(t), 5*time.Minute)
	if out, _ := l.run(t, nil, "version"); !strings.HasPrefix(out, "mcp-heal "+pluginVersion(t)) {
		t.Fatalf("after the build: got %q", out)
	}
}

// TestLauncherGoTooOld: a Go older than go.mod's requirement is never
// asked to build (with GOTOOLCHAIN=auto it would download a toolchain
// inside the hook); the user is told the real requirement and what was
// found, once.
func TestLauncherGoTooOld(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	dir := t.TempDir()
	trace := filepath.Join(l.home, "go-ran")
	stub := "#!/bin/sh\necho \"$GOTOOLCHAIN $*\" >> '" + trace + "'\n[ \"$1 $2\" = 'env GOVERSION' ] && echo go1.25.1\nexit 0\n"
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	l.path = dir + ":" + stubUname(t, "Linux", "x86_64") + ":/usr/bin:/bin"
	out, _ := l.run(t, []byte(`{}`), "hook", "SessionStart")
	if !strings.Contains(out, "building its binary") {
		t.Fatalf("first hook: got %q", out)
	}
	fail := filepath.Join(l.data, "bin", ".build-failed-"+pluginVersion(t))
	testenv.WaitFor(t, 30*time.Second, "the build with an old Go to record its failure", func() bool {
		_, err := os.Stat(fail)
		return err == nil
	})
	out, _ = l.run(t, []byte(`{}`), "hook", "PostToolUseFailure")
	if !strings.Contains(out, "needs Go 1.26.8 or newer, found go1.25.1") {
		t.Fatalf("next hook: got %q, want the real requirement and the Go found", out)
	}
	ran, _ := os.ReadFile(trace)
	if strings.Contains(string(ran), "build") || !strings.HasPrefix(string(ran), "local env GOVERSION") {
		t.Fatalf("go was run as %q, want only `GOTOOLCHAIN=local go env GOVERSION`", ran)
	}
}

// TestHooksBlocking: which hooks there are, and which block. A healthy MCP
// call meets one hook, PreToolUse, whose healthy path the launcher answers
// with builtins. There is no PostToolUse nor PostToolBatch hook: Claude
// Code charges any hook that fires after every call or batch about as much
// as a blocking /bin/true, async or not (docs/end-to-end.md, hook cost),
// and PreToolUse closes incidents instead (internal/state.CalledDir).
func TestHooksBlocking(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Async       bool `json:"async"`
				AsyncRewake bool `json:"asyncRewake"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &hooks); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"PreToolUse": "blocking", "PostToolUseFailure": "blocking", "SessionStart": "blocking"}
	for event := range hooks.Hooks {
		if _, ok := want[event]; !ok {
			t.Errorf("unexpected %s hook", event)
		}
	}
	for event, want := range want {
		if len(hooks.Hooks[event]) == 0 || len(hooks.Hooks[event][0].Hooks) == 0 {
			t.Errorf("no %s hook", event)
			continue
		}
		// A hook never slows a non-MCP tool: every tool event is matched
		// to MCP tools only.
		if m := hooks.Hooks[event][0].Matcher; event != "SessionStart" && m != "mcp__.*" {
			t.Errorf("%s hook matcher is %q, want mcp__.*", event, m)
		}
		h := hooks.Hooks[event][0].Hooks[0]
		got := "blocking"
		if h.Async {
			got = "async"
		}
		if h.AsyncRewake {
			got = "asyncRewake"
		}
		if got != want {
			t.Errorf("%s hook is %s, want %s", event, got, want)
		}
	}
}

// TestLauncherGoRequirementIsGoMod: the Go version the launcher's messages
// name is the one go.mod requires.
func TestLauncherGoRequirementIsGoMod(t *testing.T) {
	root := testenv.ModuleRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, l := range strings.Split(string(mod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			want = strings.TrimSpace(v)
		}
	}
	sh, _ := os.ReadFile(filepath.Join(root, "plugin", "mcp-heal"))
	if want == "" || !strings.Contains(string(sh), "\ngo_min="+want+"\n") {
		t.Fatalf("go.mod requires go %q; the launcher's go_min differs", want)
	}
}

var updateLines = flag.Bool("update-lines", false, "rewrite testdata/launcher-lines.golden")

// launcherLine matches a line the launcher's scripts print to the user:
// say's, echo's and printf's "mcp-heal: ..." strings and the two texts
// kept in variables (building, nocache).
var launcherLine = regexp.MustCompile(`(?:say \w+ |echo |printf |building=|nocache=)(?:"mcp-heal: ([^"]*)"|'mcp-heal: ([^']*)')`)

// sampleVars stand for what the scripts fill in, at a common length.
var sampleVars = strings.NewReplacer(
	"$(uname -s 2>/dev/null)", "FreeBSD", "$(uname -m 2>/dev/null)", "x86_64",
	"$(id -un)", "alice", "$go_min", "1.26.8", "$goos", "linux", "$goarch", "amd64",
	"$name", "mcp-heal-linux-amd64", "$stable", "/home/alice/.local/share/mcp-heal/bin/mcp-heal",
	"$dir", "/home/alice/.local/bin", "$d", "/home/alice/.local/bin",
	"$where", "/home/alice/.claude/plugins/data/mcp-heal-mcp-heal", "$why", "exit status 1",
	"%s", "2",
)

// launcherLeads are how a line that asks something may start after
// "mcp-heal: " (or "mcp-heal: hint: "): the action first.
var launcherLeads = []string{"run ", "install ", "reinstall ", "make ", "nothing to run: "}

// TestLauncherLinesGolden lists every line the launcher's scripts
// (plugin/mcp-heal, integrity.sh, build.sh, link.sh) print to the user,
// as the cmd/mcp-heal and health golden tables list the binary's: each
// puts its action first and ends it by column 80, or is info (an error
// line whose hint follows, the build's progress line). The Windows
// launcher prints the same integrity lines (plugin/winlauncher).
func TestLauncherLinesGolden(t *testing.T) {
	root := testenv.ModuleRoot(t)
	var b strings.Builder
	b.WriteString("# Every line the plugin's launcher scripts print (TestLauncherLinesGolden).\n")
	b.WriteString("# action: the column the action ends at (at most 80); info: asks nothing.\n")
	for _, f := range []string{"plugin/mcp-heal", "plugin/integrity.sh", "plugin/build.sh", "plugin/link.sh"} {
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range launcherLine.FindAllStringSubmatch(string(src), -1) {
			body := sampleVars.Replace(strings.TrimSuffix(m[1]+m[2], `\n`))
			line := "mcp-heal: " + body
			mark := ""
			switch {
			case strings.HasPrefix(body, "error: "):
				mark = "info: an error; the hint line after it carries the action"
			case strings.HasPrefix(body, "building its binary from source"):
				mark = "info: progress of a build the user started by using the plugin"
			default:
				rest, prefix := body, "mcp-heal: "
				if h, ok := strings.CutPrefix(body, "hint: "); ok {
					rest, prefix = h, "mcp-heal: hint: "
				}
				lead := ""
				for _, l := range launcherLeads {
					if strings.HasPrefix(rest, l) {
						lead = l
					}
				}
				// The action ends at its colon, or at the semicolon
				// between two commands, whichever comes first.
				end := strings.Index(rest, ": ")
				if l := strings.Index(rest, "; "); l >= 0 && (end < 0 || l < end) {
					end = l
				}
				if lead == "" {
					t.Errorf("%s: the action is not first: %q", f, line)
					mark = "action: not first"
					break
				}
				if lead == "nothing to run: " {
					end = len("nothing to run")
				} else if end < 0 {
					end = len(rest)
				}
				col := utf8.RuneCountInString(prefix + rest[:end])
				if col > 80 {
					t.Errorf("%s: the action ends at column %d, past 80: %q", f, col, line)
				}
				mark = fmt.Sprintf("action: %d", col)
			}
			fmt.Fprintf(&b, "\n[%s] (%s)\n%s\n", f, mark, line)
		}
	}
	testenv.Golden(t, filepath.Join(root, "plugin", "testdata", "launcher-lines.golden"), b.String(), *updateLines, "the launcher's lines")
}
