// Command winlauncher is the plugin's launcher on Windows, built as
// plugin/mcp-heal.exe beside the POSIX launcher plugin/mcp-heal.
//
// Why an .exe: hooks/hooks.json runs "${CLAUDE_PLUGIN_ROOT}/plugin/mcp-heal"
// in exec form (command + args, no shell), and there is no per-OS command.
// On Windows Claude Code spawns it through libuv (Bun's spawn on Windows),
// whose rule for a name without an extension is to try it with .com, then
// .exe, appended, never as it is: the same hooks.json line that runs the
// sh script on Linux and macOS runs this program on Windows, with Git Bash
// or without it (no shell is involved). A POSIX shell (Git Bash running
// the /mcp-heal command's line, or the Bash tool's bin/mcp-heal) runs the
// sh launcher, which hands over to this program on Windows. docs/install.md
// says which of this only a real Windows machine can confirm.
//
// It does what the sh launcher does, in the same order and with the same
// integrity rule:
//
//  1. before every MCP call (hook PreToolUse), an empty attention
//     directory is answered at once without starting the binary;
//  2. $MCP_HEAL_BIN, when set;
//  3. the copy of this plugin version cached under ${CLAUDE_PLUGIN_DATA};
//  4. the bundled bin/mcp-heal-windows-<arch>.exe, copied into that cache
//     and kept only when the SHA-256 of the copy matches bin/SHA256SUMS
//     (nothing is ever downloaded); without a cache, hashed where it is
//     on every run;
//  5. the stable copy, when it is this version;
//  6. an mcp-heal on PATH;
//  7. else one line saying why.
//
// A hook and the /mcp-heal command always exit 0 (hooks fail open; a
// non-zero exit aborts a command's `!` line); other uses pass the
// binary's exit status on. It keeps the stable copy current, as wrapped
// server entries point at it; a running copy cannot be replaced on
// Windows, so the old one is renamed aside first (renaming a running
// image is allowed) and removed once nothing runs it.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv))
}

// run is the launcher; its result is the exit status.
func run(args []string, getenv func(string) string) int {
	l := newLauncher(runtime.GOOS, args, getenv)
	if l.kind == "hook" && l.event == "PreToolUse" && l.healthy() {
		return 0
	}
	if l.kind == "command" && len(args) > 1 && args[1] == "link" {
		// /mcp-heal link makes a symlink in ~/.local/bin (link.sh); a
		// Windows shell has no such directory on its PATH.
		fmt.Printf("mcp-heal: /mcp-heal link is for unix shells. On Windows, run %s, or add its folder to your PATH.\n", l.paths.StableBinary)
		return 0
	}
	code, err := l.main()
	if l.kind == "cli" {
		if err != nil {
			fmt.Fprintf(os.Stderr, "mcp-heal: error: %v\n", err)
			return 1
		}
		return code
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcp-heal: the launcher failed (%v); the call goes on\n", err)
	}
	return 0
}

// main finds the binary and runs it; code is its exit status (0 when it
// could not run: what to say about that has been said).
func (l *launcher) main() (code int, err error) {
	bin := l.find()
	if bin == "" {
		return 0, nil
	}
	args := l.args
	env := os.Environ()
	if l.kind == "command" {
		args = args[1:]
		if len(args) == 0 {
			args = []string{"status"}
		}
		// Advice then names /mcp-heal commands, not a binary on PATH.
		env = append(env, "MCP_HEAL_CONTEXT=claude-code")
	}
	if l.kind != "cli" {
		// A hook's or the command's binary ends with the launcher; a
		// command line of the user's (the Bash tool's mcp-heal, a shim
		// started by hand) is left alone.
		diesWithMe()
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = env
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if l.kind == "command" {
			fmt.Printf("(mcp-heal %s exited with status %d)\n", args[0], code)
		}
		return code, nil
	}
	return 0, err
}

// isAbs is an absolute path for goos (an environment value that is not
// one is ignored, as internal/paths does).
func isAbs(goos, p string) bool {
	if goos == "windows" {
		return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') || strings.HasPrefix(p, `\\`)
	}
	return strings.HasPrefix(p, "/")
}
