//go:build unix

package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// reply is one line from testdata/client.cjs: a command's outcome or an
// event.
type reply struct {
	ID     int             `json:"id"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	MS    int64  `json:"ms"`
	Event string `json:"event"`
	at    time.Time
}

func (r reply) String() string {
	if r.OK {
		return fmt.Sprintf("ok %s", r.Result)
	}
	if r.Error != nil {
		return fmt.Sprintf("error %d %s %s", r.Error.Code, r.Error.Message, r.Error.Data)
	}
	return "no reply"
}

// tsClient drives the official TypeScript SDK client in a node process.
type tsClient struct {
	t  *testing.T
	in io.WriteCloser

	mu      sync.Mutex
	next    int
	waiters map[int]chan reply
	events  chan reply
}

// startTSClient starts the client script with serverCmd as the stdio
// server it spawns; env is added to the server's environment.
func startTSClient(t *testing.T, serverCmd []string, env map[string]string) *tsClient {
	t.Helper()
	sc, _ := json.Marshal(serverCmd)
	se, _ := json.Marshal(env)
	return startTSClientEnv(t, "SERVER_CMD="+string(sc), "SERVER_ENV="+string(se))
}

// startTSRemoteClient starts the client script connected straight to the
// remote server at url over transport, "http" (Streamable HTTP) or "sse".
func startTSRemoteClient(t *testing.T, url, transport string) *tsClient {
	t.Helper()
	return startTSClientEnv(t, "SERVER_URL="+url, "SERVER_TRANSPORT="+transport)
}

// startTSClientEnv starts the client script with env (see client.cjs).
func startTSClientEnv(t *testing.T, env ...string) *tsClient {
	t.Helper()
	prefix := testenv.NPM(t, npmClientPkgs...)
	script := filepath.Join(testenv.ModuleRoot(t), "internal", "interop", "testdata", "client.cjs")
	p := startStdio(t, "client/server", append([]string{"NODE_PATH=" + filepath.Join(prefix, "node_modules")}, env...), testenv.Node(t), script)
	c := &tsClient{t: t, in: p.in, waiters: map[int]chan reply{}, events: make(chan reply, 64)}
	go func() {
		sc := bufio.NewScanner(p.out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				continue
			}
			r.at = time.Now()
			if r.Event != "" {
				select {
				case c.events <- r:
				default:
				}
				continue
			}
			c.mu.Lock()
			ch := c.waiters[r.ID]
			delete(c.waiters, r.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}()
	return c
}

// connect connects the client to its server and returns the pid of the
// process it spawned: the shim, or the server when connected directly.
func (c *tsClient) connect() int {
	c.t.Helper()
	r := c.do(map[string]any{"op": "connect"})
	wantOK(c.t, "connect", r)
	var cr struct {
		PID int `json:"pid"`
	}
	json.Unmarshal(r.Result, &cr)
	return cr.PID
}

// start sends a command and returns where its reply will arrive.
func (c *tsClient) start(op map[string]any) <-chan reply {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.waiters[id] = ch
	c.mu.Unlock()
	op["id"] = id
	b, _ := json.Marshal(op)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to node client: %v", err)
	}
	return ch
}

// do sends a command and waits for its reply.
func (c *tsClient) do(op map[string]any) reply {
	c.t.Helper()
	return c.wait(c.start(op), 60*time.Second)
}

func (c *tsClient) wait(ch <-chan reply, d time.Duration) reply {
	c.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		c.t.Fatalf("no reply from the node client within %v", d)
	}
	return reply{}
}

func (c *tsClient) waitEvent(name string, d time.Duration) reply {
	c.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case r := <-c.events:
			if r.Event == name {
				return r
			}
		case <-deadline:
			c.t.Fatalf("no %q event within %v", name, d)
		}
	}
}

func (c *tsClient) call(name string, args map[string]any) reply {
	c.t.Helper()
	return c.do(map[string]any{"op": "call", "name": name, "args": args})
}

// shimChild returns the pid of the server the shim shimPID runs, from the
// shim's state record under xdgState (the contract), waiting until the
// record says running with a live child other than not.
func shimChild(t *testing.T, xdgState string, shimPID, not int) int {
	t.Helper()
	path := filepath.Join(xdgState, "mcp-heal", "shims", strconv.Itoa(shimPID)+".json")
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil {
			var r state.Record
			if json.Unmarshal(b, &r) == nil {
				last = string(b)
				if r.State == state.Running && r.ChildPID > 0 && r.ChildPID != not && procinfo.Alive(r.ChildPID) {
					return r.ChildPID
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no running child in the state record of shim %d (want one other than %d); last record: %s", shimPID, not, last)
	return 0
}

func kill9(t *testing.T, pid int) time.Time {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", pid, err)
	}
	return time.Now()
}

// testWriter logs each line written to it.
type testWriter struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
	buf    string
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf += string(p)
	for {
		i := strings.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := w.buf[:i]
		w.buf = w.buf[i+1:]
		func() {
			defer func() { recover() }() // the test may have ended
			w.t.Log(w.prefix + line)
		}()
	}
	return len(p), nil
}

// The fixtures the tests run and the processes in front of them, each
// started, found ready and stopped one way, here: the Go SDK's conformance
// everything-server and server-everything (on stdio: a command line; over
// Streamable HTTP: a URL once it answers), supergateway (a URL once it
// answers its own health path), and any stdio process a test talks to
// (a shim, the bridge, the node client).

// goFixture returns the Go SDK's conformance everything-server; with no
// flags it serves stdio.
func goFixture(t *testing.T) string {
	t.Helper()
	return testenv.GoInstall(t, testenv.GoSDKEverything)
}

// tsEverything returns @modelcontextprotocol/server-everything; with no
// argument it serves stdio.
func tsEverything(t *testing.T) string {
	t.Helper()
	return testenv.NPMBin(t, "mcp-server-everything", npmClientPkgs...)
}

// startGoFixtureHTTP serves the Go fixture over Streamable HTTP (stateless
// or not) and returns its URL once it answers.
func startGoFixtureHTTP(t *testing.T, stateful bool) string {
	t.Helper()
	fixture := goFixture(t)
	return startHTTPServer(t, "go-sdk fixture", func(port int) *exec.Cmd {
		return exec.Command(fixture, "-http=127.0.0.1:"+strconv.Itoa(port), "-stateless="+strconv.FormatBool(!stateful))
	})
}

// startEverythingHTTP serves server-everything over its Streamable HTTP
// transport and returns its URL once it answers. That transport is
// stateful only: it always hands out an Mcp-Session-Id, and answers a
// request without one that is not an initialize 400, "Server not
// initialized"; PORT is its one setting.
func startEverythingHTTP(t *testing.T, node string) string {
	t.Helper()
	everything := tsEverything(t)
	return startHTTPServer(t, "server-everything", func(port int) *exec.Cmd {
		cmd := exec.Command(node, everything, "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
		return cmd
	})
}

// startHTTPServer starts the server command made for a free port and
// returns its /mcp URL once it answers there. A port taken by another
// test's server before this one bound it makes the server exit: then it
// starts again on another port.
func startHTTPServer(t *testing.T, name string, command func(port int) *exec.Cmd) string {
	t.Helper()
	for attempt := 0; attempt < 3; attempt++ {
		port := testenv.FreePort(t)
		cmd := command(port)
		cmd.Stdout = &testWriter{t: t, prefix: name + " stdout: "}
		cmd.Stderr = &testWriter{t: t, prefix: name + " stderr: "}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		client := &http.Client{Timeout: time.Second}
		deadline := time.Now().Add(60 * time.Second)
		up := false
		for !up && time.Now().Before(deadline) {
			select {
			case <-exited:
				deadline = time.Now()
				continue
			default:
			}
			if resp, err := client.Get(url); err == nil {
				resp.Body.Close()
				up = true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		// Bound by this server, not another test's: it is still running
		// a moment after the port answered.
		if up {
			select {
			case <-exited:
				up = false
			case <-time.After(200 * time.Millisecond):
			}
		}
		if up {
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			return url
		}
		cmd.Process.Kill()
		<-exited
	}
	t.Fatalf("%s's HTTP server did not come up", name)
	return ""
}

// startRelay starts supergateway in front of the stdio command, stateful
// (--stateful: one server command per session) or not (one per request),
// and returns its /mcp URL once it answers. Its server processes inherit
// XDG_STATE_HOME=xdg, so shims write their state records there.
func startRelay(t *testing.T, node, supergateway, stdio, xdg string, stateful bool) string {
	t.Helper()
	var flags []string
	if stateful {
		flags = append(flags, "--stateful")
	}
	// A port picked by freePort can be taken by another test's server
	// before supergateway binds it (the package's tests run in parallel);
	// then supergateway exits and a bare TCP dial would find the other
	// server. So readiness is a health path only this relay answers, and a
	// relay that exited is started again on another port.
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		port, errText, ok := startRelayOnce(t, node, supergateway, stdio, xdg, flags)
		if ok {
			return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		}
		lastErr = errText
	}
	t.Fatalf("supergateway did not come up: %s", lastErr)
	return ""
}

// startRelayOnce starts one supergateway with flags and waits until it
// answers its own health path; on failure it stops it and says why.
func startRelayOnce(t *testing.T, node, supergateway, stdio, xdg string, flags []string) (int, string, bool) {
	t.Helper()
	port := testenv.FreePort(t)
	health := fmt.Sprintf("/relay-health-%d-%d", os.Getpid(), time.Now().UnixNano())
	args := append([]string{supergateway, "--stdio", stdio, "--outputTransport", "streamableHttp"}, flags...)
	args = append(args, "--port", strconv.Itoa(port), "--logLevel", "none", "--healthEndpoint", health)
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+xdg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start supergateway: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		// supergateway and its per-session servers; shims put their own
		// children in process groups of their own and end them when
		// their stdin closes.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		killShimChildren(filepath.Join(xdg, "mcp-heal", "shims"))
	}
	client := &http.Client{Timeout: time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", port, health)
	// Node starts slowly on a loaded machine.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			stop()
			return 0, fmt.Sprintf("exited on port %d: %s", port, stderr.String()), false
		default:
		}
		if resp, err := client.Get(url); err == nil {
			ok := resp.StatusCode == http.StatusOK
			resp.Body.Close()
			if ok {
				t.Cleanup(stop)
				return port, "", true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return 0, fmt.Sprintf("no answer on port %d within 60s: %s", port, stderr.String()), false
}

// killShimChildren kills the servers of shims that are gone or going, so
// no fixture outlives the test.
func killShimChildren(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var r state.Record
		if json.Unmarshal(b, &r) == nil && r.ChildPID > 0 && procinfo.Alive(r.ChildPID) {
			syscall.Kill(r.ChildPID, syscall.SIGKILL)
		}
	}
}

// stdioProc is a process a test talks to over its stdin and stdout.
type stdioProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out io.ReadCloser

	once   sync.Once
	onTime bool
}

// startStdio starts argv with env added to the test's environment, its
// stderr logged line by line under name, and stops it when the test ends
// (see stop).
func startStdio(t *testing.T, name string, env []string, argv ...string) *stdioProc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = &testWriter{t: t, prefix: name + " stderr: "}
	in, out := testenv.StartPiped(t, cmd)
	p := &stdioProc{cmd: cmd, in: in, out: out}
	t.Cleanup(func() { p.stop() })
	return p
}

// pid is the process's id.
func (p *stdioProc) pid() int { return p.cmd.Process.Pid }

// stop closes the process's stdin, the way its client ends an MCP stdio
// session, and reports whether it exited on its own within 10s (otherwise
// it is killed). Safe to call more than once; a test that requires the
// exit checks the result in a cleanup of its own, which runs before the
// one startStdio registered.
func (p *stdioProc) stop() bool {
	p.once.Do(func() { p.onTime = testenv.CloseAndWait(p.cmd, p.in, 10*time.Second) })
	return p.onTime
}

// remote is an HTTP (Streamable HTTP or SSE) server the test runs on a
// fixed port, so that a server started again after a kill is found at the
// same URL.
type remote struct {
	t       *testing.T
	name    string
	port    int
	path    string // "/mcp", "/sse"
	command func(port int) *exec.Cmd

	cmd    *exec.Cmd
	exited chan struct{}
	starts int // how many times it started and listened
}

// newRemote starts the server made by command on a free port and stops it
// when the test ends.
func newRemote(t *testing.T, name, path string, command func(port int) *exec.Cmd) *remote {
	t.Helper()
	r := &remote{t: t, name: name, path: path, command: command}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		r.port = testenv.FreePort(t)
		if err = r.start(); err == nil {
			t.Cleanup(func() { r.signal(syscall.SIGKILL) })
			return r
		}
	}
	t.Fatalf("%s: %v", name, err)
	return nil
}

func (r *remote) url() string { return fmt.Sprintf("http://127.0.0.1:%d%s", r.port, r.path) }

// start runs the server on r.port and waits until it accepts connections.
func (r *remote) start() error {
	cmd := r.command(r.port)
	cmd.Stdout = &testWriter{t: r.t, prefix: r.name + " stdout: "}
	cmd.Stderr = &testWriter{t: r.t, prefix: r.name + " stderr: "}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	r.cmd, r.exited = cmd, exited
	if err := testenv.WaitListening(fmt.Sprintf("127.0.0.1:%d", r.port), 60*time.Second, exited); err != nil {
		r.signal(syscall.SIGKILL)
		return err
	}
	r.starts++
	return nil
}

// signal sends sig to the running server; for SIGKILL and SIGTERM it
// waits until the process is gone (SIGKILL after 10 s for SIGTERM).
func (r *remote) signal(sig syscall.Signal) {
	if r.cmd == nil {
		return
	}
	select {
	case <-r.exited:
		return
	default:
	}
	r.cmd.Process.Signal(sig)
	if sig != syscall.SIGKILL && sig != syscall.SIGTERM {
		return
	}
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-r.exited
	}
}

// restart stops the server with sig and starts it again on the same port.
func (r *remote) restart(sig syscall.Signal) {
	r.t.Helper()
	r.signal(sig)
	if err := r.start(); err != nil {
		r.t.Fatalf("%s: start again on port %d: %v", r.name, r.port, err)
	}
}
