package rawio

import (
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestOnlyPipesOnLinux: a regular file is always read as an *os.File, and
// so is everything off Linux (raw_test.go checks the raw pipe itself).
func TestOnlyPipesOnLinux(t *testing.T) {
	f, err := os.CreateTemp(testenv.TempDir(t), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := Reader(f); got != io.Reader(f) {
		t.Fatalf("a regular file: %T, want the *os.File", got)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, raw := Writer(w).(*os.File); raw == (runtime.GOOS == "linux") {
		t.Fatalf("on %s a pipe's writer is %T", runtime.GOOS, Writer(w))
	}
}
