package plugin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// stubUname writes a `uname` that reports sysname and machine into a
// directory of its own and returns that directory, to put first on PATH.
func stubUname(t *testing.T, sysname, machine string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\ncase $1 in -s) echo '" + sysname + "' ;; -m) echo '" + machine + "' ;; *) echo '" + sysname + "' ;; esac\n"
	if err := os.WriteFile(filepath.Join(dir, "uname"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLauncherFastPathFollowsBinaryPaths: the launcher has no path rule of
// its own (issue 26): its PreToolUse fast path looks in the attention
// directory the binary named (`mcp-heal paths`, recorded under the
// environment it was resolved for), and when HOME or an XDG_* variable
// changes, the record no longer holds and the binary decides and answers
// again. The binary here names a directory no shell rule would guess, as
// adrg/xdg's ~/Library/Application Support was on macOS. Before, the
// launcher computed ~/.local/state/mcp-heal/attention itself: it ran the
// binary for a marker the binary does not read and skipped it for one it
// does.
func TestLauncherFastPathFollowsBinaryPaths(t *testing.T) {
	unixOnly(t, shLauncher)
	l := newLauncherEnv(t)
	trace := filepath.Join(l.home, "ran")
	fake := filepath.Join(l.home, "fake-mcp-heal")
	script := `#!/bin/sh
if [ "$1" = paths ]; then
	printf 'state=%s\nattention=%s\ndata=%s\nstable=%s\nruntime=%s\nplugin_data=\n' "$XDG_STATE_HOME/x" "$XDG_STATE_HOME/elsewhere" "$HOME/d" "$HOME/d/bin/mcp-heal" "$XDG_STATE_HOME/x/run"
	exit 0
fi
echo "$1 $2" >> '` + trace + `'
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ran := func() bool {
		_, err := os.Stat(trace)
		os.Remove(trace)
		return err == nil
	}
	mark := func(dir string) {
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, "shim-1"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(l.home, "a"), filepath.Join(l.home, "b 'q' |x")
	run := func(stateHome, event string) {
		t.Helper()
		cmd := launcher(l.root, "hook", event)
		cmd.Env = append(hookEnv(claudeEnv(l.home), l.root, l.home), "XDG_STATE_HOME="+stateHome, "MCP_HEAL_BIN="+fake)
		runZero(t, cmd, `{}`)
	}
	run(a, "SessionStart")
	ran()
	// A marker where a shell rule would look is not the binary's.
	mark(filepath.Join(a, "mcp-heal", "attention"))
	if run(a, "PreToolUse"); ran() {
		t.Fatal("the binary ran for a marker outside the attention directory it named")
	}
	mark(filepath.Join(a, "elsewhere"))
	if run(a, "PreToolUse"); !ran() {
		t.Fatal("a marker in the attention directory the binary named: the binary did not run")
	}
	// XDG_STATE_HOME changed: the record is another environment's.
	mark(filepath.Join(b, "elsewhere"))
	if run(b, "PreToolUse"); !ran() {
		t.Fatal("XDG_STATE_HOME changed: the fast path used the old record (or a rule of its own), the binary did not run")
	}
	os.RemoveAll(filepath.Join(b, "elsewhere"))
	if run(b, "PreToolUse"); ran() {
		t.Fatal("after the change, with the binary's new attention directory empty: the binary ran")
	}
	// The record is three single-quoted assignments, which the fast path
	// reads with `.` in one read(2) (dash's `read` made one a byte): a
	// path with a quote and a | in it (b's) comes back as it was.
	rec := filepath.Join(l.data, "bin", "paths.sh")
	if st, err := os.Lstat(rec); err != nil || st.Mode() != 0o600 {
		t.Fatalf("the record: %v, %v; want a regular file, 0600", st, err)
	}
	out, err := output(nil, "sh", "-c", `. "$1" && printf '%s\n%s' "$rec_attention" "$rec_stable"`, "sh", rec)
	if want := filepath.Join(b, "elsewhere") + "\n" + filepath.Join(l.home, "d", "bin", "mcp-heal"); err != nil || out != want {
		t.Fatalf("the record says %q (%v), want the binary's new answer %q", out, err, want)
	}
	// A broken record (it never is: it is written whole and renamed) is
	// another environment's: the launcher goes on, exits 0, and the
	// binary decides and answers again.
	if err := os.WriteFile(rec, []byte("rec_env='unterminated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if run(b, "PreToolUse"); !ran() {
		t.Fatal("with a broken record the binary did not run")
	}
	if run(b, "PreToolUse"); ran() {
		t.Fatal("the record was not written again: the binary ran again")
	}
}

// TestLauncherWindowsUnsupported: on Windows (Git Bash reports MINGW64_NT,
// MSYS_NT or CYGWIN_NT) in a copy without the Windows launcher (a source
// checkout), and on platforms the release does not build, a hook says in
// one line why it is off (once) and exits 0 without output afterwards; the
// command says it every time.
func TestLauncherWindowsUnsupported(t *testing.T) {
	unixOnly(t, shLauncher)
	for _, sys := range []string{"MINGW64_NT-10.0-19045", "MSYS_NT-10.0", "CYGWIN_NT-10.0", "FreeBSD"} {
		t.Run(sys, func(t *testing.T) {
			l := newLauncherEnv(t)
			l.path = stubUname(t, sys, "x86_64") + ":/usr/bin:/bin"
			want := "install the released plugin (docs/install.md): this copy of the plugin has no Windows launcher (plugin/mcp-heal.exe"
			if sys == "FreeBSD" {
				want = "nothing to run: FreeBSD/x86_64 is not supported yet"
			}
			out, _ := l.run(t, []byte(`{"hook_event_name":"SessionStart"}`), "hook", "SessionStart")
			if strings.Count(out, "\n") != 1 || !strings.Contains(out, `"systemMessage":"mcp-heal: `+want) {
				t.Fatalf("first hook: got %q, want one systemMessage line saying %q", out, want)
			}
			if out, _ := l.run(t, []byte(`{}`), "hook", "PostToolUseFailure"); out != "" {
				t.Fatalf("second hook: got %q, want nothing (told once)", out)
			}
			out, errOut := l.run(t, nil, "command", "status")
			if out != "" || !strings.Contains(errOut, want) {
				t.Fatalf("command: got stdout %q stderr %q, want the line on stderr", out, errOut)
			}
		})
	}
}

// TestLauncherHandsOverToWindowsLauncher: in Git Bash on Windows
// (OS=Windows_NT, which Windows sets for every process) the sh launcher
// runs plugin/mcp-heal.exe with its arguments, as the Bash tool's
// bin/mcp-heal and the /mcp-heal command's line reach it there; a hook and
// the command exit 0 whatever it does, other uses keep its status. Here a
// script named mcp-heal.exe stands for it (Linux runs it by its #!).
// Before, Git Bash got "Windows is not supported yet" and nothing ran.
func TestLauncherHandsOverToWindowsLauncher(t *testing.T) {
	unixOnly(t, shLauncher)
	root, _ := releasedPlugin(t)
	home := t.TempDir()
	trace := filepath.Join(home, "trace")
	exe := "#!/bin/sh\necho \"$*\" >> '" + trace + "'\nexit 3\n"
	if err := os.WriteFile(filepath.Join(root, "plugin", "mcp-heal.exe"), []byte(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + stubUname(t, "MINGW64_NT-10.0-19045", "x86_64") + ":/usr/bin:/bin"
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"hook", "PreToolUse"}, 0},
		{[]string{"command", "doctor", "x y"}, 0},
		{[]string{"paths"}, 3},
	} {
		os.Remove(trace)
		cmd := launcher(root, tc.args...)
		cmd.Env = []string{path, "HOME=" + home, "OS=Windows_NT", "CLAUDE_PLUGIN_ROOT=" + root}
		code, out, errOut := testenv.RunCode(t, cmd)
		got, _ := os.ReadFile(trace)
		if code != tc.code || string(got) != strings.Join(tc.args, " ")+"\n" {
			t.Errorf("%v: exit %d (want %d), the Windows launcher got %q\n%s%s", tc.args, code, tc.code, got, out, errOut)
		}
	}
}
