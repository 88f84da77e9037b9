package health

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// The shim's error replies for calls it does not send. Claude Code shows
// them to the model as "MCP error -32603: <text>"; Classify recognises
// them (rules in classify.go), so the hooks can act on them.

// CrashLoopError is the error for a call to a server in a crash loop:
// last says how it last ended, stderr its last stderr lines ("" for none),
// every the longest wait between restarts.
func CrashLoopError(server, last, stderr string, every time.Duration) string {
	msg := fmt.Sprintf("MCP server %s is failing (crash loop): %s", quote(server), last)
	if stderr != "" {
		msg += "; last stderr: " + stderr
	}
	return msg + fmt.Sprintf("; mcp-heal keeps restarting it (at most every %s); this call was not sent", every)
}

// CannotStartError is the error for a call to a server whose command
// cannot be started at all (why: from StartFailure).
func CannotStartError(server, why string) string {
	return fmt.Sprintf("MCP server %s cannot start: %s; fix the command in the MCP config, then run %s; this call was not sent",
		quote(server), why, Claude.Cmd("heal "+server))
}

// StartFailure says whether err, from starting command, means the command
// can never start as configured (not found, not executable, not a
// program), and says so with the path. Such a server is not crash-looping:
// retrying it cannot help until someone fixes the config. The command is
// looked at too, because an error that crossed a process boundary (a
// guardian started the server) is only text.
func StartFailure(command string, err error) (string, bool) {
	path := command
	if !strings.ContainsRune(command, '/') {
		lp, lerr := exec.LookPath(command)
		if lerr != nil {
			return "command not found: " + command, true
		}
		path = lp
	}
	st, serr := os.Stat(path)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return "command not found: " + path, true
	case serr != nil:
		return "", false
	case st.IsDir():
		return path + " is a directory, not a program", true
	case runtime.GOOS != "windows" && st.Mode()&0o111 == 0:
		return path + " is not executable", true
	case err == nil:
		return "", false
	case errors.Is(err, syscall.ENOEXEC) || strings.Contains(err.Error(), "exec format error"):
		return path + " is not a program (exec format error)", true
	case errors.Is(err, fs.ErrNotExist) && strings.Contains(err.Error(), path):
		// The file is there: what is missing is its #! interpreter.
		return path + ": its interpreter (the #! line) was not found", true
	case errors.Is(err, os.ErrPermission):
		return path + " is not executable", true
	}
	return "", false
}

func quote(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return `"` + name + `"`
}
