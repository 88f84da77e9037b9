//go:build unix

package shim

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// keptClient is one `mcp-heal shim --keep` process and the calls waiting
// for it, as Claude Code sees a stdio server.
type keptClient struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	mu   sync.Mutex
	wait map[string]chan string
	gone chan struct{}
}

func startKeptClient(t *testing.T, env []string, bin string) *keptClient {
	cmd := exec.Command(bin, "shim", "--keep", "1m", "--name", "chaos", "--", os.Args[0])
	cmd.Env = env
	in, out := testenv.StartPiped(t, cmd)
	c := &keptClient{cmd: cmd, in: in, wait: map[string]chan string{}, gone: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			id := gjson.Get(sc.Text(), "id").Raw
			c.mu.Lock()
			ch := c.wait[id]
			delete(c.wait, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- sc.Text()
			} else if id != "" {
				ch := make(chan string, 1)
				ch <- "DUPLICATE " + sc.Text()
				c.mu.Lock()
				c.wait["dup"+id] = ch
				c.mu.Unlock()
			}
		}
		cmd.Wait()
		close(c.gone)
	}()
	return c
}

// call sends one request and returns its response, or "LOST" when the
// shim died first: exactly one outcome either way.
func (c *keptClient) call(id int, method, params string) string {
	key := strconv.Itoa(id)
	ch := make(chan string, 1)
	c.mu.Lock()
	c.wait[key] = ch
	c.mu.Unlock()
	fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	select {
	case r := <-ch:
		return r
	case <-c.gone:
		select {
		case r := <-ch:
			return r
		default:
			return "LOST"
		}
	case <-time.After(30 * time.Second):
		return "TIMEOUT"
	}
}

// TestChaosKept streams calls through `mcp-heal shim --keep` while the
// shim, the kept guardian and the server are SIGKILLed at random. A dead
// shim is replaced the way Claude Code does (a new process, a new
// handshake), which re-attaches. Every call gets exactly one outcome (an
// answer, or the connection lost with the shim), no non-idempotent call
// runs twice, and once everything is stopped no process is left.
func TestChaosKept(t *testing.T) {
	duration := 20 * time.Second
	if testing.Short() {
		duration = 4 * time.Second
	}
	bin := testenv.Binary(t)
	dir := t.TempDir()
	env := keptEnv(t, dir)
	events := filepath.Join(dir, "events")

	var mu sync.Mutex
	cur := startKeptClient(t, env, bin)
	seen := map[int]bool{} // every server and guardian pid observed
	nextID := 0
	handshake := func(c *keptClient) int {
		mu.Lock()
		nextID++
		id := nextID
		mu.Unlock()
		c.call(id, "initialize", initParams)
		fmt.Fprintln(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		mu.Lock()
		nextID++
		id = nextID
		mu.Unlock()
		r := c.call(id, "tools/call", `{"name":"pid","arguments":{}}`)
		pid, _ := strconv.Atoi(gjson.Get(r, "result.content.0.text").String())
		return pid
	}
	note := func(pid int) {
		if pid <= 0 {
			return
		}
		mu.Lock()
		seen[pid] = true
		if g := testenv.ParentPID(pid); g > 1 {
			seen[g] = true
		}
		mu.Unlock()
	}
	note(handshake(cur))

	var kills [3]int
	stopKiller := killAtRandom(500*time.Millisecond, time.Second, func() {
		mu.Lock()
		c := cur
		mu.Unlock()
		// The server's pid from the shim's record (the freshest).
		srv := 0
		files, _ := filepath.Glob(filepath.Join(dir, "mcp-heal", "shims", strconv.Itoa(c.cmd.Process.Pid)+".json"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			srv = int(gjson.GetBytes(b, "child_pid").Int())
		}
		note(srv)
		switch n := rand.IntN(3); {
		case n == 0:
			syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL)
			kills[0]++
		case n == 1 && srv > 0:
			if g := testenv.ParentPID(srv); g > 1 && g != c.cmd.Process.Pid {
				syscall.Kill(g, syscall.SIGKILL)
				kills[1]++
			}
		case srv > 0:
			syscall.Kill(srv, syscall.SIGKILL)
			kills[2]++
		}
	})

	type result struct{ tool, key, res string }
	var results []result
	deadline := time.Now().Add(duration)
	for i := 0; time.Now().Before(deadline); i++ {
		mu.Lock()
		c := cur
		nextID++
		id := nextID
		mu.Unlock()
		select {
		case <-c.gone:
			// Claude Code starts the server's command again.
			nc := startKeptClient(t, env, bin)
			mu.Lock()
			cur = nc
			mu.Unlock()
			note(handshake(nc))
			continue
		default:
		}
		key := fmt.Sprintf("c%d", i)
		tool, args := "echo", `{"text":"`+key+`","key":"`+key+`"}`
		if rand.IntN(3) == 0 {
			tool, args = "write", `{"key":"`+key+`"}`
		}
		r := c.call(id, "tools/call", `{"name":"`+tool+`","arguments":`+args+`}`)
		results = append(results, result{tool, key, r})
	}
	stopKiller()
	mu.Lock()
	c := cur
	mu.Unlock()
	c.in.Close()
	<-c.gone
	stopCmd := exec.Command(bin, "stop", "chaos")
	stopCmd.Env = env
	stopCmd.Run() // nothing to stop is fine: the last guardian may have been killed

	b, _ := os.ReadFile(events)
	executed := executedCalls(strings.Split(string(b), "\n"))
	var ok, lost, failed int
	for _, r := range results {
		n := executed[r.tool+" "+r.key]
		switch v := judgeCall(t, r.tool, r.key, r.res, n); {
		case v == "ok":
			ok++
		case v == "failed":
			failed++
		case r.res == "LOST":
			lost++
		case r.res == "TIMEOUT":
			t.Errorf("%s %s: no outcome within 30s", r.tool, r.key)
		default:
			t.Errorf("%s %s: %s", r.tool, r.key, r.res)
		}
	}
	// No process of any server tree or guardian is left.
	deadlineGone := time.Now().Add(15 * time.Second)
	for pid := range seen {
		for testenv.Alive(pid) && time.Now().Before(deadlineGone) {
			time.Sleep(50 * time.Millisecond)
		}
		if testenv.Alive(pid) {
			// What it is and who holds it, for the next one to look at.
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("pid %d (a server or guardian of the run) outlived it: ppid %d, %q", pid, testenv.ParentPID(pid), strings.ReplaceAll(string(cmdline), "\x00", " "))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	t.Logf("chaos with --keep: %d calls: %d ok, %d errors, %d lost with their shim; kills: %d shims, %d guardians, %d servers; %d server/guardian pids checked gone",
		len(results), ok, failed, lost, kills[0], kills[1], kills[2], len(seen))
}

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
	// `stop` finds a kept server by the record its guardian writes once
	// it sees the shim gone: wait for it, or stop may find none.
	testenv.UseStateDir(t, dir)
	testenv.WaitFor(t, 10*time.Second, "the detached kept server's record", func() bool {
		recs, _ := state.List()
		return slices.ContainsFunc(recs, func(r *state.Record) bool { return r.Kept && r.DetachedSince != nil })
	})
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
	return append(os.Environ(), "GORACE=atexit_sleep_ms=0", serverEnv(testServer(dir)), "XDG_STATE_HOME="+dir, "XDG_RUNTIME_DIR="+testenv.RuntimeDir(t))
}
