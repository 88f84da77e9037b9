//go:build unix

package shim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestKeptOpenServerRequestAnswered: a server->client request (roots/list)
// that a kept server's shim left open when it died is answered with an
// error by the guardian, so the server does not wait for it forever; the
// next shim re-attaches to the same server.
func TestKeptOpenServerRequestAnswered(t *testing.T) {
	bin := testenv.Binary(t)
	dir := t.TempDir()
	env := keptEnv(t, dir)
	events := filepath.Join(dir, "events")
	waitEvent := func(want string) bool {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			b, _ := os.ReadFile(events)
			if strings.Contains(string(b), want) {
				return true
			}
			time.Sleep(20 * time.Millisecond)
		}
		return false
	}
	a := startKeptClient(t, env, bin)
	a.call(1, "initialize", initParams)
	a.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	pid := gjson.Get(a.call(2, "tools/call", `{"name":"pid","arguments":{}}`), "result.content.0.text").String()
	a.in.Write([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{}}}` + "\n"))
	if !waitEvent("call ask") {
		t.Fatal("the server never got the ask call")
	}
	time.Sleep(200 * time.Millisecond) // its roots/list reaches the (silent) client
	a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.gone
	if !waitEvent("asked error=true") {
		b, _ := os.ReadFile(events)
		t.Fatalf("the open roots/list was never answered after the shim died; events:\n%s", b)
	}
	b := startKeptClient(t, env, bin)
	b.call(1, "initialize", initParams)
	b.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	if got := gjson.Get(b.call(2, "tools/call", `{"name":"pid","arguments":{}}`), "result.content.0.text").String(); got != pid || pid == "" {
		t.Errorf("re-attached to pid %q, want the kept %q", got, pid)
	}
	b.in.Close()
	<-b.gone
	stop := exec.Command(bin, "stop", "chaos")
	stop.Env = env
	if out, err := stop.CombinedOutput(); err != nil {
		t.Errorf("stop: %v %s", err, out)
	}
	n, _ := strconv.Atoi(pid)
	testenv.WaitGone(t, "the kept server after stop", 10*time.Second, n)
}

// keptEnv is the environment of a test of kept shims: the example server
// (testServer(dir), its events in dir/events), state in dir, and a
// runtime dir of its own for the keeper's socket, removed at the end.
func keptEnv(t *testing.T, dir string) []string {
	t.Helper()
	rt, err := os.MkdirTemp("", "kt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	return append(os.Environ(), "GORACE=atexit_sleep_ms=0", serverEnv(testServer(dir)), "XDG_STATE_HOME="+dir, "XDG_RUNTIME_DIR="+rt)
}
