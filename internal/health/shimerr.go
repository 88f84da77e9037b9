package health

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
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
// cannot be started at all (why: from CannotStartReason).
func CannotStartError(server, why string) string {
	return fmt.Sprintf("MCP server %s cannot start: %s; fix the command in the MCP config, then run %s; this call was not sent",
		quote(server), why, Claude.Cmd("heal "+server))
}

// CannotStartReason says whether err, from starting command, means the
// command can never start as configured (not found, not executable, not a
// program), and says so with the path. Such a server is not crash-looping:
// retrying it at full speed cannot help until someone fixes the config.
func CannotStartReason(command string, err error) (string, bool) {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return "command not found: " + command, true
	case errors.Is(err, syscall.ENOEXEC):
		return command + " is not a program (exec format error)", true
	case errors.Is(err, os.ErrPermission):
		return command + " is not executable", true
	}
	return "", false
}

func quote(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return `"` + name + `"`
}
