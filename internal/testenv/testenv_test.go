package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Under -short, NeedsFull skips with a message naming the full suite; in the
// full suite it lets the test run. Checked in a child test process so that
// both modes are covered by one run.
func TestNeedsFull(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "" {
		NeedsFull(t, "a thing")
		t.Log("ran")
		return
	}
	for _, short := range []bool{true, false} {
		args := []string{"-test.run", "^TestNeedsFull$", "-test.v"}
		if short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child (short=%v): %v\n%s", short, err, out)
		}
		skipped := strings.Contains(string(out), "--- SKIP") && strings.Contains(string(out), "needs a thing: full suite only")
		ran := strings.Contains(string(out), "ran")
		if short && (!skipped || ran) || !short && (skipped || !ran) {
			t.Errorf("short=%v: skipped %v, ran %v:\n%s", short, skipped, ran, out)
		}
	}
}
