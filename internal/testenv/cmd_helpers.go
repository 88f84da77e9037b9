package testenv

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// RunBinary runs the mcp-heal binary (Binary) with args, stdin on its
// stdin and exactly env (nil: the test's own), in dir ("": the test's
// own), and returns its exit status and outputs. It fails tb when the
// binary cannot run, or is still running after 60 s (then it is killed):
// the hang is the failure.
func RunBinary(tb testing.TB, env []string, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(tb), args...)
	cmd.Env, cmd.Dir, cmd.Stdin = env, dir, strings.NewReader(stdin)
	code, stdout, stderr = RunCode(tb, cmd)
	if ctx.Err() != nil {
		tb.Fatalf("mcp-heal %s still running after 60 s; stderr:\n%.2000s", strings.Join(args, " "), stderr)
	}
	return code, stdout, stderr
}

// shimCommand is `mcp-heal shim` with args (its flags, then "--" and the
// server's command line) and env added to the test's environment.
func shimCommand(tb testing.TB, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(Binary(tb), append([]string{"shim"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// StartShim starts `mcp-heal shim` with args (its flags, then "--" and
// the server's command line) and env added to the test's environment. Its
// stdin stays open for the caller; when tb ends it is closed, which ends
// the shim, and the shim is waited for (15 s, then killed).
func StartShim(tb testing.TB, env []string, args ...string) (*exec.Cmd, io.WriteCloser) {
	tb.Helper()
	cmd := shimCommand(tb, env, args...)
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		tb.Fatalf("start mcp-heal shim: %v", err)
	}
	tb.Cleanup(func() { CloseAndWait(cmd, stdin, 15*time.Second) })
	return cmd, stdin
}
