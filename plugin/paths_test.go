package plugin_test

import (
	"os"
	"os/exec"
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

// TestLauncherPathsAgreeWithBinary: the launcher (which checks the
// attention directory with builtins before every MCP call, and installs
// the stable copy wrapped servers run) and the binary (which writes the
// state and reads the stable copy's path) compute the same paths, for each
// platform the release builds and for each way the environment can set
// them. The launcher sees the platform through a stub `uname`; the binary
// computes the platform's rule with --goos. This is the macOS bug of
// issue 8: the binary used ~/Library/Application Support on darwin while
// the launcher looked under ~/.local/state.
func TestLauncherPathsAgreeWithBinary(t *testing.T) {
	unixOnly(t, shLauncher)
	bin := testenv.Binary(t)
	launcher := filepath.Join(testenv.ModuleRoot(t), "plugin", "mcp-heal")
	envs := map[string][]string{
		"defaults":     {"HOME=/home/u"},
		"xdg":          {"HOME=/home/u", "XDG_STATE_HOME=/s", "XDG_DATA_HOME=/d", "XDG_RUNTIME_DIR=/run/user/7", "CLAUDE_PLUGIN_DATA=/p/data"},
		"relative xdg": {"HOME=/home/u", "XDG_STATE_HOME=rel/state", "XDG_DATA_HOME=./d", "XDG_RUNTIME_DIR=r", "CLAUDE_PLUGIN_DATA=p"},
		"no home":      {},
		"empty values": {"HOME=/h", "XDG_STATE_HOME=", "XDG_DATA_HOME=", "CLAUDE_PLUGIN_DATA="},
	}
	for _, target := range []struct{ goos, sysname, machine string }{
		{"linux", "Linux", "x86_64"},
		{"linux", "Linux", "aarch64"},
		{"darwin", "Darwin", "x86_64"},
		{"darwin", "Darwin", "arm64"},
	} {
		for name, env := range envs {
			t.Run(target.sysname+"-"+target.machine+"/"+name, func(t *testing.T) {
				path := "PATH=" + stubUname(t, target.sysname, target.machine) + ":/usr/bin:/bin"
				cmd := exec.Command(launcher, "paths")
				cmd.Env = append([]string{path}, env...)
				sh, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("launcher paths: %v\n%s", err, sh)
				}
				cmd = exec.Command(bin, "paths", "--goos", target.goos)
				cmd.Env = append([]string{path}, env...)
				goOut, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("mcp-heal paths: %v\n%s", err, goOut)
				}
				if string(sh) != string(goOut) || strings.Count(string(sh), "\n") != 6 {
					t.Fatalf("launcher and binary disagree\nlauncher:\n%s\nbinary:\n%s", sh, goOut)
				}
			})
		}
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
			want := "this copy of the plugin has no Windows launcher (plugin/mcp-heal.exe"
			if sys == "FreeBSD" {
				want = "FreeBSD/x86_64 is not supported yet"
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
		cmd := exec.Command(filepath.Join(root, "plugin", "mcp-heal"), tc.args...)
		cmd.Env = []string{path, "HOME=" + home, "OS=Windows_NT", "CLAUDE_PLUGIN_ROOT=" + root}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(trace)
		if code != tc.code || string(got) != strings.Join(tc.args, " ")+"\n" {
			t.Errorf("%v: exit %d (want %d), the Windows launcher got %q\n%s", tc.args, code, tc.code, got, out)
		}
	}
}
