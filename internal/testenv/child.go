package testenv

import (
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// StartPiped starts cmd with pipes to its stdin and from its stdout, the
// way a client talks to a stdio server, and fails tb if it cannot.
func StartPiped(tb testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err == nil {
		stdout, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		tb.Fatalf("start %s: %v", cmd.Path, err)
	}
	return stdin, stdout
}

// RunCode runs cmd to its end with its stdout and stderr captured, and
// returns its exit status with them. It fails tb only when cmd could not
// run; a non-zero exit is the caller's to judge.
func RunCode(tb testing.TB, cmd *exec.Cmd) (code int, stdout, stderr string) {
	tb.Helper()
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), o.String(), e.String()
	} else if err != nil {
		tb.Fatal(err)
	}
	return 0, o.String(), e.String()
}

// StartWait starts cmd and returns the channel its Wait's error arrives
// on once it ends, for a test that waits for it with a deadline. It fails
// tb when cmd cannot start.
func StartWait(tb testing.TB, cmd *exec.Cmd) <-chan error {
	tb.Helper()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}
