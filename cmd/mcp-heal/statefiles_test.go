package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestShimRefusesSymlinkedLog: a link planted in the state dir in place of
// a server's lifecycle log (pointing at a file of the user's) is neither
// appended to nor chmodded by a real shim, which still serves its client
// and says why it has no log.
func TestShimRefusesSymlinkedLog(t *testing.T) {
	bin := testenv.Binary(t)
	stateDir := testenv.TempDir(t)
	logs := filepath.Join(stateDir, "mcp-heal", "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(testenv.TempDir(t), "precious.txt")
	if err := os.WriteFile(target, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Symlink(t, target, filepath.Join(logs, "sym.log"))
	cmd := exec.Command(bin, "shim", "--name", "sym", "--", bin, "example-server")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+stateDir)
	stdin, stderr := startInitialized(t, cmd)
	testenv.CloseAndWait(cmd, stdin, 15*time.Second)
	b, _ := os.ReadFile(target)
	st, _ := os.Stat(target)
	if string(b) != "precious\n" || st.Mode().Perm() != 0o644 {
		t.Errorf("the link's target was changed: %q, mode %v", b, st.Mode().Perm())
	}
	if !strings.Contains(stderr.String(), "symbolic link") {
		t.Errorf("the shim does not say why it has no log; stderr:\n%s", stderr.String())
	}
}

// startInitialized starts cmd, a shim, and initializes its session: it
// fails t unless the first line the shim writes is initialize's result.
// The rest of its stdout is discarded; stdin stays open for the caller
// to close (testenv.CloseAndWait).
func startInitialized(t *testing.T, cmd *exec.Cmd) (stdin io.WriteCloser, stderr *testenv.LockedBuffer) {
	t.Helper()
	stderr = &testenv.LockedBuffer{}
	cmd.Stderr = stderr
	stdin, stdout := testenv.StartPiped(t, cmd)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Text()
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, `"result"`) {
			t.Fatalf("initialize: got %q\nstderr: %s", l, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer to initialize; stderr: %s", stderr.String())
	}
	return stdin, stderr
}
