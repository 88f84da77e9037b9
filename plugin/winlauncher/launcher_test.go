package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/sha256sums/sumstest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// The test binary plays both parts, so that the tests run wherever the
// test binary does (Windows, Wine) with no shell and no Go: copied to
// plugin/mcp-heal(.exe) it is the launcher; copied anywhere else (the
// bundled binary, the cached and stable copies) it is a fake mcp-heal
// that records its arguments in $FAKE_TRACE and exits $FAKE_EXIT.
func TestMain(m *testing.M) {
	if os.Getenv("WINLAUNCHER_TEST") == "1" {
		exe, _ := os.Executable()
		if filepath.Base(filepath.Dir(exe)) == "plugin" || os.Getenv("WINLAUNCHER_AS") == "launcher" && filepath.Base(exe) == "mcp-heal"+exeSuffix(runtime.GOOS) && filepath.Base(filepath.Dir(exe)) == "bin" {
			os.Exit(run(os.Args[1:], os.Getenv))
		}
		if tr := os.Getenv("FAKE_TRACE"); tr != "" {
			f, _ := os.OpenFile(tr, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			f.WriteString(filepath.Base(exe) + " " + strings.Join(os.Args[1:], " ") + " context=" + os.Getenv("MCP_HEAL_CONTEXT") + "\n")
			f.Close()
		}
		if pf := os.Getenv("FAKE_PIDFILE"); pf != "" {
			os.WriteFile(pf, []byte(strconv.Itoa(os.Getpid())), 0o600)
		}
		if os.Getenv("FAKE_BLOCK") == "1" {
			io.Copy(io.Discard, os.Stdin) // runs until stdin closes, as a shim does
		}
		os.Stdout.WriteString(`{"fake":true}` + "\n")
		code, _ := strconv.Atoi(os.Getenv("FAKE_EXIT"))
		os.Exit(code)
	}
	os.Exit(m.Run())
}

type plugin struct {
	root, bundled, home, trace string
	env                        []string
}

func self(t *testing.T) []byte {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// released lays out a plugin as the release does: the launcher, the
// manifest, this platform's bundled binary and SHA256SUMS listing it.
func released(t *testing.T) *plugin {
	t.Helper()
	p := &plugin{root: testenv.TempDir(t), home: testenv.TempDir(t)}
	p.trace = filepath.Join(p.home, "trace")
	b := self(t)
	write := func(rel string, data []byte, mode os.FileMode) {
		f := filepath.Join(p.root, rel)
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("plugin/mcp-heal"+exeSuffix(runtime.GOOS), b, 0o755)
	write(".claude-plugin/plugin.json", []byte(`{"name": "mcp-heal", "version": "1.2.3"}`), 0o644)
	name := "mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH + exeSuffix(runtime.GOOS)
	write("bin/"+name, b, 0o755)
	p.bundled = filepath.Join(p.root, "bin", name)
	sum := sha256.Sum256(b)
	write("bin/SHA256SUMS", []byte("0000000000000000000000000000000000000000000000000000000000000000  mcp-heal-plan9-amd64\r\n"+hex.EncodeToString(sum[:])+" *"+name), 0o644)
	p.env = []string{
		"WINLAUNCHER_TEST=1", "FAKE_TRACE=" + p.trace,
		"HOME=" + p.home, "USERPROFILE=" + p.home, "LOCALAPPDATA=" + filepath.Join(p.home, "AppData", "Local"),
		"XDG_STATE_HOME=" + filepath.Join(p.home, "state"), "XDG_DATA_HOME=" + filepath.Join(p.home, "data"),
		"CLAUDE_PLUGIN_ROOT=" + p.root, "CLAUDE_PLUGIN_DATA=" + filepath.Join(p.home, "plugin-data"),
		"PATH=" + filepath.Join(p.home, "empty"), // no mcp-heal on PATH
	}
	if v := os.Getenv("SYSTEMROOT"); v != "" {
		p.env = append(p.env, "SYSTEMROOT="+v)
	}
	return p
}

// run runs the launcher as Claude Code runs a hook; code is its exit status.
func (p *plugin) run(t *testing.T, extraEnv []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(p.root, "plugin", "mcp-heal"+exeSuffix(runtime.GOOS)), args...)
	cmd.Env = append(append([]string{}, p.env...), extraEnv...)
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"x"}`)
	return testenv.RunCode(t, cmd)
}

func (p *plugin) ran(t *testing.T) string {
	b, _ := os.ReadFile(p.trace)
	os.Remove(p.trace)
	return string(b)
}

func (p *plugin) stable() string {
	return filepath.Join(p.home, "data", "mcp-heal", "bin", "mcp-heal"+exeSuffix(runtime.GOOS))
}

// TestLauncherRunsVerifiedBundledBinary: the bundled binary runs only as
// the cached copy whose SHA-256 matched SHA256SUMS (CRLF, binary-mode '*'
// and other platforms' lines read right); the stable copy is installed
// with its version; once cached, a change to the bundled file no longer
// matters.
func TestLauncherRunsVerifiedBundledBinary(t *testing.T) {
	p := released(t)
	code, out, _ := p.run(t, nil, "hook", "SessionStart")
	if code != 0 || out != `{"fake":true}`+"\n" {
		t.Fatalf("hook: exit %d, %q", code, out)
	}
	if got := p.ran(t); got != "mcp-heal-1.2.3"+exeSuffix(runtime.GOOS)+" hook SessionStart context=\n" {
		t.Fatalf("ran %q, want the cached copy mcp-heal-1.2.3 with the hook's arguments", got)
	}
	if v, _ := os.ReadFile(p.stable() + ".version"); string(v) != "1.2.3\n" || !regular(p.stable()) {
		t.Fatalf("stable copy: version %q, regular %v", v, regular(p.stable()))
	}
	os.WriteFile(p.bundled, []byte("tampered after the check"), 0o755)
	if code, out, _ := p.run(t, nil, "hook", "PostToolUseFailure"); code != 0 || !strings.Contains(out, "fake") {
		t.Fatalf("after the bundled file changed: exit %d, %q, want the cached copy's reply", code, out)
	}
}

// TestLauncherRefusesTamperedBinary: a bundled binary whose SHA-256 is not
// the one SHA256SUMS lists (or that it does not list) never runs; a hook
// says so once per version and exits 0, the command says it every time.
// Without a cache (the data directory is a file) it is checked where it
// is, with the same outcome.
func TestLauncherRefusesTamperedBinary(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(p *plugin)
	}{
		{"changed", func(p *plugin) { os.WriteFile(p.bundled, append(self(t), 0), 0o755) }},
		{"unlisted", func(p *plugin) {
			os.WriteFile(filepath.Join(p.root, "bin", "SHA256SUMS"), []byte("00  mcp-heal-plan9-amd64\n"), 0o644)
		}},
		{"no sums", func(p *plugin) { os.Remove(filepath.Join(p.root, "bin", "SHA256SUMS")) }},
		{"no cache", func(p *plugin) {
			os.WriteFile(p.bundled, append(self(t), 0), 0o755)
			os.WriteFile(filepath.Join(p.home, "plugin-data"), nil, 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := released(t)
			tc.tamper(p)
			code, out, _ := p.run(t, nil, "hook", "SessionStart")
			if code != 0 || !strings.Contains(out, `"systemMessage":"mcp-heal: `) || !strings.Contains(out, "SHA256SUMS") {
				t.Fatalf("first hook: exit %d, %q, want one systemMessage about SHA256SUMS", code, out)
			}
			if got := p.ran(t); got != "" {
				t.Fatalf("the refused binary ran: %q", got)
			}
			if _, out, _ := p.run(t, nil, "hook", "PostToolUseFailure"); out != "" {
				t.Fatalf("second hook: %q, want nothing (told once)", out)
			}
			code, out, errOut := p.run(t, nil, "command", "status")
			if code != 0 || out != "" || !strings.Contains(errOut, "SHA256SUMS") {
				t.Fatalf("command: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if got := p.ran(t); got != "" || regular(p.stable()) {
				t.Fatalf("the refused binary ran (%q) or became the stable copy", got)
			}
		})
	}
}

// TestLauncherPreToolUseHealthyPath: with nothing in the attention
// directory but a marker's temporary file, PreToolUse is answered without
// starting the binary; with a marker, the binary decides.
func TestLauncherPreToolUseHealthyPath(t *testing.T) {
	p := released(t)
	att := filepath.Join(p.home, "state", "mcp-heal", "attention")
	if code, out, _ := p.run(t, nil, "hook", "PreToolUse"); code != 0 || out != "" || p.ran(t) != "" {
		t.Fatalf("no attention directory: exit %d, %q; want nothing and no binary", code, out)
	}
	os.MkdirAll(att, 0o700)
	os.WriteFile(filepath.Join(att, ".server-a.7.tmp"), nil, 0o600)
	if code, out, _ := p.run(t, nil, "hook", "PreToolUse"); code != 0 || out != "" || p.ran(t) != "" {
		t.Fatalf("only a temporary file: exit %d, %q; want nothing and no binary", code, out)
	}
	os.WriteFile(filepath.Join(att, "shim-12345"), nil, 0o600)
	if code, out, _ := p.run(t, nil, "hook", "PreToolUse"); code != 0 || !strings.Contains(out, "fake") || !strings.Contains(p.ran(t), "hook PreToolUse") {
		t.Fatalf("with a marker: exit %d, %q; want the binary's reply", code, out)
	}
}

// TestLauncherExitStatus: a hook exits 0 whatever the binary does, the
// command exits 0 and names the status in its output (a non-zero exit
// aborts the `!` line) with MCP_HEAL_CONTEXT set, and other uses (the
// Bash tool's mcp-heal) pass the status on.
func TestLauncherExitStatus(t *testing.T) {
	p := released(t)
	fail := []string{"FAKE_EXIT=3"}
	if code, _, _ := p.run(t, fail, "hook", "PostToolUseFailure"); code != 0 {
		t.Fatalf("hook: exit %d, want 0", code)
	}
	p.ran(t)
	code, out, _ := p.run(t, fail, "command", "logs", "x")
	if code != 0 || !strings.Contains(out, "(mcp-heal logs exited with status 3)") {
		t.Fatalf("command: exit %d, %q", code, out)
	}
	if got := p.ran(t); !strings.HasSuffix(got, " logs x context=claude-code\n") {
		t.Fatalf("command ran %q, want `logs x` with MCP_HEAL_CONTEXT=claude-code", got)
	}
	if code, _, _ := p.run(t, nil, "command"); code != 0 || !strings.HasSuffix(p.ran(t), " status context=claude-code\n") {
		t.Fatal("command without arguments: want status")
	}
	if code, _, _ := p.run(t, fail, "version"); code != 3 {
		t.Fatalf("cli: exit %d, want the binary's 3", code)
	}
}

// TestLauncherReplacesStableCopyAside: an older stable copy is replaced by
// renaming it aside first (Windows refuses to overwrite a running
// program, which a wrapped server's shim is), and the old copy is removed
// when nothing runs it.
func TestLauncherReplacesStableCopyAside(t *testing.T) {
	p := released(t)
	os.MkdirAll(filepath.Dir(p.stable()), 0o700)
	old := append(self(t), []byte("old")...)
	os.WriteFile(p.stable(), old, 0o755)
	os.WriteFile(p.stable()+".version", []byte("1.0.0\n"), 0o644)
	// A shim running the old copy.
	shim := exec.Command(p.stable())
	shim.Env = append(append([]string{}, p.env...), "FAKE_BLOCK=1")
	stdin, err := shim.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := shim.Start(); err != nil {
		t.Fatal(err)
	}
	defer shim.Wait()
	defer stdin.Close()
	p.run(t, nil, "hook", "SessionStart")
	if b, _ := os.ReadFile(p.stable()); string(b) == string(old) {
		t.Fatal("the running stable copy was not replaced")
	}
	if v, _ := os.ReadFile(p.stable() + ".version"); string(v) != "1.2.3\n" {
		t.Fatalf("stable version %q", v)
	}
	stdin.Close()
	shim.Wait()
	// The next update removes what nothing runs any more.
	os.WriteFile(p.stable()+".version", []byte("1.0.0\n"), 0o644)
	p.run(t, nil, "hook", "SessionStart")
	if left, _ := filepath.Glob(p.stable() + ".*"); len(left) != 1 {
		t.Fatalf("left beside the stable copy: %v, want only its .version", left)
	}
}

// TestVersionKeyIsTheShellLaunchers: the version becomes a file name part
// by the sh launcher's rule, its fallback being POSIX cksum's CRC (checked
// against the system's cksum where there is one).
func TestVersionKeyIsTheShellLaunchers(t *testing.T) {
	for v, want := range map[string]string{"1.2.3": "1.2.3", "0.1.0+dev_x": "0.1.0+dev_x", "": ""} {
		if want != "" && versionKey(v) != want {
			t.Errorf("versionKey(%q) = %q, want %q", v, versionKey(v), want)
		}
	}
	for _, v := range []string{"../../x", "a b", ".hidden", "-n", strings.Repeat("9", 65), "C:\\x"} {
		got := versionKey(v)
		if !strings.HasPrefix(got, "v") || strings.ContainsAny(got, `/\. `) {
			t.Errorf("versionKey(%q) = %q, want v and digits", v, got)
		}
		if _, err := exec.LookPath("cksum"); err == nil && runtime.GOOS != "windows" {
			out, err := exec.Command("sh", "-c", `printf '%s' "$1" | cksum`, "sh", v).Output()
			if err != nil {
				t.Fatal(err)
			}
			if want := "v" + strings.Fields(string(out))[0]; got != want {
				t.Errorf("versionKey(%q) = %q, cksum says %q", v, got, want)
			}
		}
	}
}

// TestGoMinIsGoMod: the Go version the advice names is go.mod's.
func TestGoMinIsGoMod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "go.mod")) // tests run in the package directory
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\ngo "+goMin+"\n") {
		t.Fatalf("go.mod does not require go %s", goMin)
	}
}

// TestLauncherAsToolsMcpHeal: as bin/mcp-heal.exe (the PowerShell tool's
// `mcp-heal`: Claude Code puts the plugin's bin/ on its PATH) it runs the
// verified binary with the plugin as its root, and another plugin's
// CLAUDE_PLUGIN_DATA in the tool's environment is left alone: there is no
// cache, the stable copy serves, as for the sh bin/mcp-heal.
func TestLauncherAsToolsMcpHeal(t *testing.T) {
	p := released(t)
	tool := filepath.Join(p.root, "bin", "mcp-heal"+exeSuffix(runtime.GOOS))
	if err := os.WriteFile(tool, self(t), 0o755); err != nil {
		t.Fatal(err)
	}
	// The launcher is its own test binary: under bin/ it would be the
	// fake, so make it the launcher by the name of its directory.
	other := testenv.TempDir(t)
	cmd := exec.Command(tool, "version")
	cmd.Env = append(append([]string{}, p.env...), "CLAUDE_PLUGIN_DATA="+other, "WINLAUNCHER_AS=launcher")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fake") {
		t.Fatalf("bin/mcp-heal version: %v, %q", err, out)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Fatalf("it wrote into another plugin's data dir: %v", ents)
	}
	p.onlyStable(t)
}

// onlyStable fails unless the stable copy's directory holds the stable
// copy and its version file, and nothing else.
func (p *plugin) onlyStable(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(p.stable()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want := []string{filepath.Base(p.stable()), filepath.Base(p.stable()) + ".version"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("stable dir: got %q, want %q (no second checked copy: issue 26, item 4)", got, want)
	}
}

// TestLauncherCommandWithoutPluginData is issue 26's item 4 on Windows:
// the `!` line runs without CLAUDE_PLUGIN_DATA, and the launcher made a
// second checked copy beside the stable one. Now it checks the bundled
// binary, installs the stable copy and runs it from then on.
func TestLauncherCommandWithoutPluginData(t *testing.T) {
	p := released(t)
	for i, kv := range p.env {
		if strings.HasPrefix(kv, "CLAUDE_PLUGIN_DATA=") {
			p.env = append(p.env[:i:i], p.env[i+1:]...)
			break
		}
	}
	for _, want := range []string{"mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH, "mcp-heal"} {
		if code, _, _ := p.run(t, nil, "command", "status"); code != 0 {
			t.Fatalf("command: exit %d", code)
		}
		if got := p.ran(t); got != want+exeSuffix(runtime.GOOS)+" status context=claude-code\n" {
			t.Fatalf("ran %q, want %s", got, want)
		}
	}
	p.onlyStable(t)
}

// TestLauncherSumsTable: the Windows launcher runs the bundled binary
// exactly when sumstest's SHA256SUMS lists its hash, as the sh launcher
// does (plugin/sums_test.go) on the same table.
func TestLauncherSumsTable(t *testing.T) {
	b := sha256.Sum256(self(t))
	sum := hex.EncodeToString(b[:])
	for _, c := range sumstest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p := released(t)
			os.WriteFile(filepath.Join(p.root, "bin", "SHA256SUMS"), []byte(c.Expand(sum, filepath.Base(p.bundled))), 0o644)
			code, out, errOut := p.run(t, nil, "version")
			ran := strings.Contains(out, "fake")
			if code != 0 && ran || ran != c.Runs {
				t.Fatalf("exit %d, ran %v, want ran %v\nstdout %q\nstderr %q", code, ran, c.Runs, out, errOut)
			}
			if !c.Runs && !strings.Contains(errOut, "does not match the plugin's SHA256SUMS") {
				t.Errorf("stderr %q, want it to say the binary does not match", errOut)
			}
		})
	}
}
