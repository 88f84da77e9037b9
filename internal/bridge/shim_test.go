//go:build unix

package bridge

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// shimProc is the real binary, `mcp-heal shim --url`, driven over its
// stdin/stdout the way Claude Code drives it.
type shimProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex
	next   atomic.Int64
	stderr *lockedBuffer
	// StateDir is the shim's XDG_STATE_HOME.
	StateDir string

	mu      sync.Mutex
	waiters map[string]chan []byte
	eof     chan struct{}
	// notes gets the notifications the shim writes (the first 256 not
	// yet read; later ones are dropped).
	notes chan []byte
}

type lockedBuffer = testenv.LockedBuffer

// startShim runs mcp-heal shim with args and a private state directory.
func startShim(t testing.TB, args ...string) *shimProc {
	t.Helper()
	return startShimEnv(t, nil, args...)
}

// startShimEnv is startShim with extra environment.
func startShimEnv(t testing.TB, env []string, args ...string) *shimProc {
	t.Helper()
	bin := testenv.Binary(t)
	cmd := exec.Command(bin, append([]string{"shim"}, args...)...)
	stateDir := t.TempDir()
	cmd.Env = append(append(os.Environ(), "XDG_STATE_HOME="+stateDir, "MCP_HEAL_DEBUG=1"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s := &shimProc{t: t, cmd: cmd, waiters: map[string]chan []byte{}, eof: make(chan struct{}), notes: make(chan []byte, 256), stderr: &lockedBuffer{}, StateDir: stateDir}
	cmd.Stderr = s.stderr
	in, out := testenv.StartPiped(t, cmd)
	s.stdin = in
	go s.read(out)
	t.Cleanup(func() {
		if !testenv.CloseAndWait(cmd, s.stdin, 10*time.Second) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left in its group
		}
		if t.Failed() || os.Getenv("BRIDGE_TEST_SHIM_LOG") != "" {
			t.Logf("shim stderr:\n%s", testenv.LastLines(s.stderr.String(), 60))
		}
	})
	return s
}

func (s *shimProc) read(out io.Reader) {
	defer close(s.eof)
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			s.route(line[:len(line)-1])
		}
		if err != nil {
			return
		}
	}
}

func (s *shimProc) route(line []byte) {
	m, err := jsonrpc.Peek(line)
	if err != nil {
		s.t.Errorf("shim wrote a line that is not JSON-RPC: %q", line)
		return
	}
	switch m.Kind {
	case jsonrpc.KindRequest:
		switch m.Method {
		case "roots/list":
			s.write(jsonrpc.ResultReply(m.ID, []byte(`{"roots":[]}`)))
		case "ping":
			s.write(jsonrpc.ResultReply(m.ID, []byte(`{}`)))
		default:
			s.write(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeMethodNotFound, "not supported by the test client", nil))
		}
	case jsonrpc.KindNotification:
		select {
		case s.notes <- append([]byte(nil), line...):
		default:
		}
	case jsonrpc.KindResponse:
		s.mu.Lock()
		ch := s.waiters[string(m.ID)]
		delete(s.waiters, string(m.ID))
		s.mu.Unlock()
		if ch == nil {
			s.t.Errorf("response nobody waits for: %s", line)
			return
		}
		ch <- append([]byte(nil), line...)
	}
}

func (s *shimProc) write(line []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.stdin.Write(append(line, '\n'))
}

// call sends a request and waits up to timeout for its response line.
func (s *shimProc) call(method, params string, timeout time.Duration) ([]byte, error) {
	id := fmt.Appendf(nil, "%d", s.next.Add(1))
	ch := make(chan []byte, 1)
	s.mu.Lock()
	s.waiters[string(id)] = ch
	s.mu.Unlock()
	var p []byte
	if params != "" {
		p = []byte(params)
	}
	s.write(jsonrpc.NewRequest(id, method, p))
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-s.eof:
		return nil, fmt.Errorf("%s: the shim closed its stdout", method)
	case <-t.C:
		return nil, fmt.Errorf("%s: no response in %s", method, timeout)
	}
}

// ok is call, failing unless the response is a result.
func (s *shimProc) ok(method, params string, timeout time.Duration) ([]byte, error) {
	r, err := s.call(method, params, timeout)
	if err != nil {
		return nil, err
	}
	if e := gjson.GetBytes(r, "error"); e.Exists() {
		return r, fmt.Errorf("%s: error response %s", method, e.Raw)
	}
	return r, nil
}

func (s *shimProc) initialize() {
	s.t.Helper()
	if _, err := s.ok("initialize", initParams, 30*time.Second); err != nil {
		s.t.Fatal(err)
	}
	s.write([]byte(initialized))
	// As Claude Code does: the shim learns the tools' annotations here
	// (readOnlyHint makes a call that was in flight when a server died
	// safe to re-send).
	if _, err := s.ok("tools/list", "", 30*time.Second); err != nil {
		s.t.Fatal(err)
	}
}

// echo calls tool with {arg: text} and checks the text came back (want,
// when set, is the text to expect instead).
func (s *shimProc) echo(tl tool, text string, timeout time.Duration) error {
	r, err := s.ok("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{%q:%q}}`, tl.name, tl.arg, text), timeout)
	if err != nil {
		return err
	}
	want := text
	if tl.want != "" {
		want = tl.want
	}
	if got := gjson.GetBytes(r, "result.content.0.text").Str; !strings.Contains(got, want) {
		return fmt.Errorf("tools/call %s: got %q, want it to contain %q", tl.name, got, want)
	}
	return nil
}

var nsEcho = tool{"echo", "text", ""}

// Through the real binary: a server restarted mid-session is healed
// without the client seeing anything, whatever it answers the stale
// session (server-everything 400, Go SDK 404, legacy SSE: stream closed).
func TestShimHealsRestartedServers(t *testing.T) {
	for _, kind := range []string{everythingHTTP, everythingSSE, goSDKStateful} {
		t.Run(kind, func(t *testing.T) {
			srv := newServer(t, kind)
			sh := startShim(t, "--name", "remote", "--url", srv.URL)
			sh.initialize()
			tl := echoTool(kind)
			for i := 0; i < 3; i++ {
				if err := sh.echo(tl, fmt.Sprintf("call-%d", i), 30*time.Second); err != nil {
					t.Fatalf("before restart %d: %v", i, err)
				}
				srv.Restart()
				if err := sh.echo(tl, fmt.Sprintf("after-%d", i), 30*time.Second); err != nil {
					t.Fatalf("after restart %d: %v", i, err)
				}
			}
			if _, err := sh.ok("tools/list", "", 30*time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The 2026-07-28 stateless era passes through the shim: server/discover,
// Mcp-Method/Mcp-Name, unknown methods stay -32601, restarts are invisible.
func TestShimStatelessEra(t *testing.T) {
	srv := newServer(t, goSDKStateless)
	sh := startShim(t, "--name", "stateless", "--url", srv.URL)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bridge-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	if _, err := sh.ok("server/discover", "{"+meta+"}", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	call := `{"name":"test_simple_text","arguments":{},` + meta + `}`
	for i := 0; i < 3; i++ {
		r, err := sh.ok("tools/call", call, 30*time.Second)
		if err != nil || !strings.Contains(string(r), "simple text") {
			t.Fatalf("call %d: %s %v", i, r, err)
		}
		srv.Restart()
	}
	r, err := sh.call("no/such/method", "{"+meta+"}", 30*time.Second)
	if err != nil || gjson.GetBytes(r, "error.code").Int() != -32601 {
		t.Fatalf("unknown method: %s %v", r, err)
	}
}

// One port serving three namespaces (/a/mcp, /b/mcp, /c/mcp), restarted 20
// times: every namespace recovers every time, no call fails. Also reports
// the time from the server being back to each namespace's first good call.
func TestShimManyNamespaces20Restarts(t *testing.T) {
	testenv.NeedsFull(t, "a long run (20 server restarts)")
	srv := newServer(t, multiNS)
	nss := []string{"a", "b", "c"}
	shims := make([]*shimProc, len(nss))
	for i, ns := range nss {
		// Default flags: a remote session that came up resets the
		// backoff, so a restart every second is healed at once.
		shims[i] = startShim(t, "--name", "ns-"+ns, "--url", srv.URL+"/"+ns+"/mcp")
		shims[i].initialize()
	}
	var failed atomic.Int64
	var calls atomic.Int64
	var mu sync.Mutex
	var recovery []time.Duration
	round := func(tag string, back time.Time) {
		var wg sync.WaitGroup
		for i, sh := range shims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				calls.Add(1)
				if err := sh.echo(nsEcho, tag+"-"+nss[i], 30*time.Second); err != nil {
					failed.Add(1)
					t.Errorf("namespace %s, %s: %v", nss[i], tag, err)
					return
				}
				if !back.IsZero() {
					mu.Lock()
					recovery = append(recovery, time.Since(back))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	round("first", time.Time{})
	for r := 0; r < 20; r++ {
		srv.Restart()
		round(fmt.Sprintf("restart%d", r), time.Now())
		round(fmt.Sprintf("steady%d", r), time.Time{})
	}
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed", n, calls.Load())
	}
	sort.Slice(recovery, func(i, j int) bool { return recovery[i] < recovery[j] })
	t.Logf("%d calls, 0 failed; restart to first good call per namespace: median %s, p95 %s, max %s",
		calls.Load(), recovery[len(recovery)/2], recovery[len(recovery)*95/100], recovery[len(recovery)-1])
	if med := recovery[len(recovery)/2]; med > 2*time.Second {
		t.Errorf("median restart-to-first-good-call %s, want under 2s: a restarted remote must be healed at once, not after a growing backoff", med)
	}
}

// A server down for 5 s while calls keep coming: every call waits and
// succeeds once it is back.
func TestShimServerDownFiveSeconds(t *testing.T) {
	testenv.NeedsFull(t, "a long run (a 5 s outage)")
	srv := newServer(t, multiNS)
	sh := startShim(t, "--name", "down5", "--deadline", "20s", "--url", srv.URL+"/a/mcp")
	sh.initialize()
	var wg sync.WaitGroup
	var failed, calls atomic.Int64
	stop := time.Now().Add(8 * time.Second)
	var back atomic.Int64 // unix nanos when the server was back
	go func() {
		time.Sleep(time.Second)
		srv.Stop()
		time.Sleep(5 * time.Second)
		srv.Start()
		back.Store(time.Now().UnixNano())
	}()
	var firstAfter atomic.Int64
	for i := 0; time.Now().Before(stop); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calls.Add(1)
			if err := sh.echo(nsEcho, fmt.Sprintf("c%d", i), 30*time.Second); err != nil {
				failed.Add(1)
				t.Errorf("call %d: %v", i, err)
				return
			}
			if b := back.Load(); b != 0 {
				firstAfter.CompareAndSwap(0, time.Now().UnixNano()-b)
			}
		}()
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed", n, calls.Load())
	}
	t.Logf("%d calls over 8 s with the server down for 5 s: 0 failed; first call answered %s after the server was back",
		calls.Load(), time.Duration(firstAfter.Load()).Round(time.Millisecond))
}

// Down for longer than the deadline: the call gets one clear error that
// names the URL, what was tried and for how long; the next call after the
// server is back succeeds.
func TestShimDownPastDeadline(t *testing.T) {
	srv := newServer(t, multiNS)
	url := srv.URL + "/a/mcp"
	sh := startShim(t, "--name", "longdown", "--deadline", "2s", "--url", url)
	sh.initialize()
	if err := sh.echo(nsEcho, "up", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	r, err := sh.call("tools/call", `{"name":"echo","arguments":{"text":"down"}}`, 20*time.Second)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	msg := gjson.GetBytes(r, "error.message").Str
	if msg == "" {
		t.Fatalf("call while down past the deadline: got %s, want an error", r)
	}
	if strings.Contains(msg, "127.0.0.1") {
		t.Errorf("error %q shows the URL's host", msg)
	}
	for _, want := range []string{"[URL hidden]", "unreachable", "connection refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if took < 2*time.Second || took > 8*time.Second {
		t.Errorf("error came after %s, want about the 2s deadline", took)
	}
	t.Logf("after %s: %s", took.Round(time.Millisecond), msg)
	srv.Start()
	if err := sh.echo(nsEcho, "back", 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Headers from flags with ${VAR} from the environment reach the server;
// the value never appears in the state record, the lifecycle log or the
// shim's stderr (debug level), even when the server echoes it back.
// SIGHUP reconnects (a new session); the record says remote and names the
// URL without its query values.
func TestShimHeadersSecretsAndSIGHUP(t *testing.T) {
	srv := newServer(t, multiNS)
	url := srv.URL + "/auth/mcp?tenant=acme-corp"
	sh := startShimEnv(t, []string{"MCP_TEST_TOKEN=" + testSecret},
		"--name", "authed", "--header", "Authorization: Bearer ${MCP_TEST_TOKEN}", "--url", url)
	sh.initialize()
	if err := sh.echo(nsEcho, "with-token", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	if err := sh.echo(nsEcho, "after-restart", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := sh.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if err := sh.echo(nsEcho, "after-sighup", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	// A shim with the wrong token: a clear error, never "session lost",
	// and the server's echo of the bad token is redacted.
	bad := startShimEnv(t, []string{"MCP_TEST_TOKEN=wrong-token-999"},
		"--name", "badauth", "--header", "Authorization: Bearer ${MCP_TEST_TOKEN}", "--url", url)
	r, err := bad.call("initialize", initParams, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if msg := gjson.GetBytes(r, "error.message").Str; !strings.Contains(msg, "HTTP 401") || strings.Contains(string(r), "wrong-token-999") {
		t.Errorf("initialize with a bad token: %s", r)
	}

	var recs []string
	for _, s := range []*shimProc{sh, bad} {
		filepath.WalkDir(s.StateDir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				if strings.Contains(p, "shims") {
					recs = append(recs, string(b))
				}
				for _, secret := range []string{testSecret, "wrong-token-999", "acme-corp"} {
					if strings.Contains(string(b), secret) {
						t.Errorf("%s holds a secret (%s):\n%s", p, secret, b)
					}
				}
			}
			return nil
		})
		for _, secret := range []string{testSecret, "wrong-token-999", "acme-corp"} {
			if strings.Contains(s.stderr.String(), secret) {
				t.Errorf("shim stderr holds a secret (%s)", secret)
			}
		}
	}
	if len(recs) == 0 {
		t.Fatalf("no state record written")
	}
	rec := recs[0]
	if gjson.Get(rec, "mode").Str != "remote" || gjson.Get(rec, "target").Str != "[URL hidden]" || strings.Contains(rec, "/auth/mcp") {
		t.Errorf("state record: %s", rec)
	}
}

// A tools/call the retry policy would not re-send (no annotations: it may
// not be idempotent) that meets a restarted server's 404 is re-sent anyway
// and succeeds: the server refused the stale session, so the call never
// ran. The state record counts the re-sends and names the reason.
func TestShimResendsCallsRefusedByStaleSession(t *testing.T) {
	srv := newServer(t, goSDKStateful)
	sh := startShim(t, "--name", "stale", "--url", srv.URL)
	sh.initialize()
	tl := echoTool(goSDKStateful) // test_simple_text: no annotations
	for i := 0; i < 3; i++ {
		srv.Restart()
		// At once: before the GET stream notices (it waits 500 ms before
		// reopening), so the call itself meets the 404.
		if err := sh.echo(tl, "", 30*time.Second); err != nil {
			t.Fatalf("call %d after a restart: %v", i, err)
		}
	}
	var rec []byte
	filepath.WalkDir(sh.StateDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, "shims") && strings.HasSuffix(p, ".json") {
			rec, _ = os.ReadFile(p)
		}
		return nil
	})
	if n := gjson.GetBytes(rec, "retried").Int(); n < 1 {
		t.Errorf("state record retried = %d, want the refused calls re-sent: %s", n, rec)
	}
	if r := gjson.GetBytes(rec, "last_exit.reason").Str; r != "session lost: HTTP 404, the server said: «session not found»" {
		t.Errorf("last exit reason %q: %s", r, rec)
	}
	t.Logf("record: restarts=%d retried=%d failed_calls=%d last_exit=%q",
		gjson.GetBytes(rec, "restarts").Int(), gjson.GetBytes(rec, "retried").Int(),
		gjson.GetBytes(rec, "failed_calls").Int(), gjson.GetBytes(rec, "last_exit.reason").Str)
}
