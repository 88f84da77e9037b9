//go:build unix

package shim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/clock"
	"github.com/mcp-heal/mcp-heal/internal/example"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

type lockedBuffer = testenv.LockedBuffer

// startLogged starts cmd (the real binary, or a server) with its stdin
// and stdout piped and its stderr kept. When t ends, its stdin is closed
// and it is waited for (10 s, then killed), and a failed test's log gets
// the end of its stderr.
func startLogged(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser, *lockedBuffer) {
	t.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	in, out := testenv.StartPiped(t, cmd)
	t.Cleanup(func() {
		testenv.CloseAndWait(cmd, in, 10*time.Second)
		if t.Failed() {
			t.Logf("%s stderr (tail):\n%s", strings.Join(cmd.Args, " "), testenv.LastLines(stderr.String(), 4000))
		}
	})
	return in, out, stderr
}

// gateDialer holds every Dial after the first until the test lets it go.
type gateDialer struct {
	upstream.Dialer
	mu    sync.Mutex
	n     int
	gate  chan struct{}
	dials chan int
}

func (g *gateDialer) Dial(ctx context.Context) (upstream.Conn, error) {
	g.mu.Lock()
	g.n++
	n := g.n
	gate := g.gate
	g.mu.Unlock()
	select {
	case g.dials <- n:
	default:
	}
	if n > 1 && gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Dialer.Dial(ctx)
}

// harness is a shim in-process in front of the example server (testServer),
// and a client.
type harness struct {
	t       *testing.T
	s       *Shim
	dir     string
	stderr  *lockedBuffer
	logs    *lockedBuffer
	in      *io.PipeWriter
	cancel  context.CancelFunc
	runDone chan error

	mu       sync.Mutex
	nextID   int
	waiters  map[string]chan []byte
	answered map[string]int
	dups     []string
	other    chan []byte
	raw      chan []byte // every line, when tapped

	clk      *clock.Fake     // with hopt.fakeClock
	advanced []time.Duration // the delays advanceUntil fired

	stateless bool // the session is in the stateless era: requests carry the version
}

type hopt struct {
	env     []string
	server  func(o *example.Options, dir string) // changes testServer(dir)
	opts    func(*Options)
	dialer  func(upstream.Dialer) upstream.Dialer
	command []string // default: the example server
	// fakeClock drives the supervisor with a clock.Fake (h.clk): backoff,
	// hang and idle-probe delays pass only when the test advances it.
	fakeClock bool
}

func newHarness(t *testing.T, ho hopt) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{
		t: t, dir: dir, stderr: &lockedBuffer{}, logs: &lockedBuffer{},
		waiters: map[string]chan []byte{}, answered: map[string]int{},
		other: make(chan []byte, 10000), runDone: make(chan error, 1),
	}
	// GORACE: a -race binary otherwise sleeps 1s at exit.
	srv := testServer(dir)
	if ho.server != nil {
		ho.server(&srv, dir)
	}
	env := append(os.Environ(), "GORACE=atexit_sleep_ms=0", serverEnv(srv))
	for _, e := range ho.env {
		env = append(env, strings.ReplaceAll(e, "$DIR", dir))
	}
	cmd := ho.command
	if cmd == nil {
		cmd = []string{os.Args[0]}
	}
	var d upstream.Dialer = &proc.Dialer{Config: proc.Config{Path: cmd[0], Args: cmd[1:], Env: env, Stderr: h.stderr, StopStep: 300 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(h.logs, nil))}}
	if ho.dialer != nil {
		d = ho.dialer(d)
	}
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	o := Options{
		Name: "fake", Dialer: d, Stdin: cr, Stdout: sw,
		Log:        slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		// No pings before a minute of silence, and a janitor tick of a
		// second: advanceUntil fires only shorter timers.
		HangAfter: time.Minute, Look: time.Minute, PingTimeout: 5 * time.Second,
	}
	if ho.fakeClock {
		h.clk = clock.NewFake()
		o.Clock = h.clk
	}
	if ho.opts != nil {
		ho.opts(&o)
	}
	h.s = New(o)
	h.in = cw
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.runDone <- h.s.Run(ctx); sw.Close() }()
	go h.read(sr)
	t.Cleanup(h.close)
	return h
}

func (h *harness) path(name string) string { return filepath.Join(h.dir, name) }

func (h *harness) close() {
	h.in.Close()
	select {
	case <-h.runDone:
	case <-time.After(15 * time.Second):
		h.t.Errorf("shim did not stop within 15s after client EOF")
		h.cancel()
		<-h.runDone
	}
	h.cancel()
	if h.t.Failed() {
		h.t.Logf("shim logs:\n%s", testenv.LastLines(h.logs.String(), 60))
	}
}

func (h *harness) read(r io.Reader) {
	jr := jsonrpc.NewReader(r)
	for {
		line, err := jr.Next()
		if err != nil {
			return
		}
		line = append([]byte(nil), line...)
		h.mu.Lock()
		raw := h.raw
		h.mu.Unlock()
		if raw != nil {
			raw <- line
		}
		m, err := jsonrpc.Peek(line)
		if err != nil {
			h.t.Errorf("shim wrote a line that is not JSON-RPC: %.200s", line)
			continue
		}
		if m.Kind == jsonrpc.KindResponse {
			id := string(m.ID)
			h.mu.Lock()
			h.answered[id]++
			if h.answered[id] > 1 {
				h.dups = append(h.dups, id)
			}
			ch := h.waiters[id]
			delete(h.waiters, id)
			h.mu.Unlock()
			if ch != nil {
				ch <- line
			}
			continue
		}
		h.other <- line
	}
}

func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := h.in.Write([]byte(line + "\n")); err != nil {
		h.t.Fatalf("write to shim: %v", err)
	}
}

// start sends a request and returns its id and the channel its response
// arrives on. In the stateless era the request carries the protocol
// version in _meta, as a client of that era sends it.
func (h *harness) start(method, params string) (string, <-chan []byte) {
	h.mu.Lock()
	if h.stateless && method != "server/discover" {
		params = withVersionMeta(params)
	}
	h.nextID++
	id := fmt.Sprint(h.nextID)
	ch := make(chan []byte, 1)
	h.waiters[id] = ch
	h.mu.Unlock()
	req := jsonrpc.NewRequest([]byte(id), method, nil)
	if params != "" {
		req = jsonrpc.NewRequest([]byte(id), method, []byte(params))
	}
	h.send(string(req))
	return id, ch
}

func (h *harness) wait(ch <-chan []byte, what string) gjson.Result {
	h.t.Helper()
	select {
	case b := <-ch:
		return gjson.ParseBytes(b)
	case <-time.After(20 * time.Second):
		h.t.Fatalf("no response to %s within 20s", what)
		return gjson.Result{}
	}
}

func (h *harness) call(method, params string) gjson.Result {
	h.t.Helper()
	_, ch := h.start(method, params)
	return h.wait(ch, method)
}

func (h *harness) tool(name, args string) gjson.Result {
	h.t.Helper()
	if args == "" {
		args = "{}"
	}
	return h.call("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
}

const initParams = `{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"test","version":"1"}}`

// handshake does what Claude Code does: the server/discover probe, then
// (handshake era) initialize, initialized, tools/list.
func (h *harness) handshake() {
	h.t.Helper()
	d := h.call("server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	h.mu.Lock()
	h.stateless = d.Get("result").Exists()
	h.mu.Unlock()
	if d.Get("error.code").Int() == jsonrpc.CodeMethodNotFound {
		r := h.call("initialize", initParams)
		if !r.Get("result.protocolVersion").Exists() {
			h.t.Fatalf("initialize: %s", r.Raw)
		}
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	if r := h.call("tools/list", ""); !r.Get("result.tools").Exists() {
		h.t.Fatalf("tools/list: %s", r.Raw)
	}
}

func (h *harness) childPID() int {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if !h.s.isUp() {
		return 0
	}
	return h.s.run.childPID
}

// killChild SIGKILLs the current child and returns its pid.
func (h *harness) killChild() int {
	h.t.Helper()
	pid := h.waitUp(0)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		h.t.Fatalf("kill %d: %v", pid, err)
	}
	return pid
}

// waitUp waits until a child other than old is up and returns its pid.
func (h *harness) waitUp(old int) int {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if pid := h.childPID(); pid != 0 && pid != old {
			return pid
		}
		time.Sleep(2 * time.Millisecond)
	}
	h.t.Fatalf("no server up (other than %d) within 20s", old)
	return 0
}

func (h *harness) events() []string {
	b, _ := os.ReadFile(h.path("events"))
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func (h *harness) countEvents(prefix string) int {
	n := 0
	for _, e := range h.events() {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

// waitCalls waits, 5 s at most, until the server has logged n calls of
// tool (events starting "call "+tool).
func (h *harness) waitCalls(tool string, n int) {
	h.t.Helper()
	testenv.WaitFor(h.t, 5*time.Second, "the call to reach the server", func() bool { return h.countEvents("call "+tool) == n })
}

// withVersionMeta adds the stateless era's protocol version to params'
// _meta.
func withVersionMeta(params string) string {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	if params == "" || params == "{}" {
		return "{" + meta + "}"
	}
	if strings.Contains(params, `"_meta"`) {
		return params
	}
	return "{" + meta + "," + strings.TrimPrefix(params, "{")
}

func (h *harness) sessEra() string {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.sess.era
}

// advanceUntil fires the supervisor's backoff timers on the fake clock,
// one at a time as each is set, until cond holds. Backoff delays in these
// tests are under a second; the janitor's tick is a second and the replay
// and ping time-outs longer, so those never fire here.
func (h *harness) advanceUntil(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("no %s within 20s (real time)", what)
		}
		// A short real wait: cond may come true by an event (a server
		// answering) rather than a timer.
		if d, ok := h.clk.WaitTimer(10*time.Millisecond, func(d time.Duration) bool { return d < time.Second }); ok {
			h.advanced = append(h.advanced, d)
			h.clk.Advance(d)
		}
	}
}

// advanceTimer waits until the code under test has set a timer of exactly
// d on the fake clock, then moves the clock past it.
// silenceUntilKilled steps the janitor until the server is killed, at
// most limit of fake time.
func (h *harness) silenceUntilKilled(limit time.Duration) {
	h.t.Helper()
	for elapsed := time.Duration(0); h.kills() == 0; elapsed += h.step() {
		if elapsed > limit {
			h.t.Fatalf("not killed after %v of silence", elapsed)
		}
	}
}

func (h *harness) advanceTimer(d time.Duration, what string) {
	h.t.Helper()
	if _, ok := h.clk.WaitTimer(20*time.Second, func(x time.Duration) bool { return x == d }); !ok {
		h.t.Fatalf("no %v timer (%s) within 20s (real time)", d, what)
	}
	h.clk.Advance(d)
}
