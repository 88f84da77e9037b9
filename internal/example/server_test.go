package example

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// running is one in-process server with a client on its streams.
type running struct {
	c      *Client
	in     *io.PipeWriter // the server's stdin
	errc   chan error
	stderr *strings.Builder
}

func start(t *testing.T, opts Options) *running {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &running{in: inW, errc: make(chan error, 1), stderr: &strings.Builder{}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := Run(ctx, opts, inR, outW, &lockedWriter{b: r.stderr})
		outW.Close()
		r.errc <- err
	}()
	r.c = NewClient(outR, inW)
	t.Cleanup(func() {
		inW.Close()
		cancel()
		select {
		case <-r.errc:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop")
		}
	})
	return r
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustInit(t *testing.T, c *Client, wantEra string) {
	t.Helper()
	era, err := c.Initialize(ctxT(t), "2025-11-25")
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if era != wantEra {
		t.Fatalf("era: got %q, want %q", era, wantEra)
	}
}

func call(t *testing.T, c *Client, tool string, args map[string]any) Response {
	t.Helper()
	r, err := c.CallTool(ctxT(t), tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if r.Error != nil {
		t.Fatalf("%s: error %v", tool, r.Error)
	}
	return r
}

func TestEras(t *testing.T) {
	tests := []struct {
		era     string
		wantEra string
	}{
		{EraBoth, "stateless"},
		{EraHandshake, "handshake"},
		{EraStateless, "stateless"},
	}
	for _, tt := range tests {
		t.Run(tt.era, func(t *testing.T) {
			r := start(t, Options{Era: tt.era})
			mustInit(t, r.c, tt.wantEra)
			if got := call(t, r.c, ToolEcho, map[string]any{"text": "hi"}).Text(); got != "hi" {
				t.Errorf("echo: got %q, want %q", got, "hi")
			}
		})
	}
}

func TestInitializeAfterProbeOnSameProcess(t *testing.T) {
	// Claude Code's order against a handshake-only server: probe, -32601,
	// initialize 2025-11-25.
	r := start(t, Options{Era: EraHandshake})
	resp, err := r.c.Call(ctxT(t), "server/discover", map[string]any{"_meta": map[string]any{metaProtocolVersion: StatelessVersion}})
	if err != nil || resp.Error == nil || resp.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("server/discover: got %+v %v, want -32601", resp.Error, err)
	}
	resp, err = r.c.Call(ctxT(t), "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	if err != nil || resp.Error != nil {
		t.Fatalf("initialize: %v %v", err, resp.Error)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(resp.Result, &res)
	if res.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocolVersion: got %q, want 2025-11-25", res.ProtocolVersion)
	}
}

func TestUnknownVersionGetsLatest(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	resp, _ := r.c.Call(ctxT(t), "initialize", map[string]any{"protocolVersion": "1999-01-01", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	if resp.Error != nil || !strings.Contains(string(resp.Result), `"2025-11-25"`) {
		t.Fatalf("got %s, want protocolVersion 2025-11-25", resp.Raw)
	}
}

func TestRequestBeforeInitializeIsRejected(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	resp, err := r.c.Call(ctxT(t), "tools/list", nil)
	if err != nil || resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("got %s %v, want -32600", resp.Raw, err)
	}
	// ping is allowed at any time.
	resp, err = r.c.Call(ctxT(t), "ping", nil)
	if err != nil || resp.Error != nil {
		t.Fatalf("ping: %s %v", resp.Raw, err)
	}
}

func TestTools(t *testing.T) {
	dir := testenv.TempDir(t)
	state := filepath.Join(dir, "counter")
	log := filepath.Join(dir, "calls")
	r := start(t, Options{Era: EraHandshake, StateFile: state, CallLog: log})
	mustInit(t, r.c, "handshake")

	if got := call(t, r.c, ToolAdd, map[string]any{"a": 2, "b": 3.5}).Text(); got != "5.5" {
		t.Errorf("add: got %q, want 5.5", got)
	}
	for want := 1; want <= 3; want++ {
		got := call(t, r.c, ToolCounterIncrement, nil).Text()
		if got != itoa(want) {
			t.Errorf("counter_increment: got %q, want %d", got, want)
		}
	}
	if n, _ := ReadCounter(state); n != 3 {
		t.Errorf("state file: got %d, want 3", n)
	}
	if got := call(t, r.c, ToolSetValue, map[string]any{"key": "k", "value": "v"}).Text(); got != "k=v" {
		t.Errorf("set_value: got %q", got)
	}
	start := time.Now()
	if got := call(t, r.c, ToolSlow, map[string]any{"ms": 150}).Text(); got != "waited 150 ms" {
		t.Errorf("slow: got %q", got)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("slow returned after %v, want >= 150ms", d)
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "counter_increment {}"); n != 3 {
		t.Errorf("call log has %d counter_increment lines, want 3:\n%s", n, b)
	}
	resp, _ := r.c.CallTool(ctxT(t), "nope", nil)
	if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: got %s, want -32602", resp.Raw)
	}
}

func TestToolAnnotations(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	mustInit(t, r.c, "handshake")
	resp, err := r.c.Call(ctxT(t), "tools/list", nil)
	if err != nil || resp.Error != nil {
		t.Fatal(err, resp.Error)
	}
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly   *bool `json:"readOnlyHint"`
				Idempotent *bool `json:"idempotentHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	json.Unmarshal(resp.Result, &res)
	// safe: what a proxy may retry under the spec's hints.
	want := map[string]bool{ToolEcho: true, ToolAdd: true, ToolCounterIncrement: false, ToolSetValue: true,
		ToolSlow: true, ToolCrash: false, ToolHang: false, ToolSessionInfo: true}
	for _, tool := range res.Tools {
		a := tool.Annotations
		safe := (a.ReadOnly != nil && *a.ReadOnly) || (a.Idempotent != nil && *a.Idempotent)
		if w, ok := want[tool.Name]; !ok || w != safe {
			t.Errorf("%s: retry-safe %v, want %v", tool.Name, safe, w)
		}
		delete(want, tool.Name)
	}
	if len(want) > 0 {
		t.Errorf("tools missing from tools/list: %v", want)
	}
}

func TestSlowDoesNotBlockPing(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	mustInit(t, r.c, "handshake")
	done := make(chan struct{})
	go func() { r.c.CallTool(ctxT(t), ToolSlow, map[string]any{"ms": 2000}); close(done) }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if _, err := r.c.Call(ctxT(t), "ping", nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("ping took %v during a slow call", d)
	}
}

func TestCancelledCallGetsNoReply(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	mustInit(t, r.c, "handshake")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.c.CallTool(ctx, ToolSlow, map[string]any{"ms": 5000}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
	// The server is still fine and answers the next call.
	call(t, r.c, ToolEcho, map[string]any{"text": "x"})
}

func TestCrash(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	mustInit(t, r.c, "handshake")
	go r.c.CallTool(ctxT(t), ToolCrash, map[string]any{"code": 7})
	select {
	case err := <-r.errc:
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 7 {
			t.Fatalf("got %v, want ExitError code 7", err)
		}
		r.errc <- err // for cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("crash did not end Run")
	}
}

func TestHang(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	mustInit(t, r.c, "handshake")
	go r.c.CallTool(ctxT(t), ToolHang, nil)
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := r.c.Call(ctx, "ping", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ping to a hung server: got %v, want no answer", err)
	}
	// A hung server ignores stdin EOF too; only cancellation (a signal)
	// ends it.
	r.in.Close()
	select {
	case err := <-r.errc:
		t.Fatalf("hung server ended on EOF: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestHangFile: a call arriving while the hang file exists removes it and
// hangs the server with that (read-only) call outstanding; without the
// file, calls are answered as usual.
func TestHangFile(t *testing.T) {
	f := filepath.Join(testenv.TempDir(t), "hang")
	r := start(t, Options{Era: EraHandshake, HangFile: f})
	mustInit(t, r.c, "handshake")
	if _, err := r.c.CallTool(ctxT(t), ToolEcho, map[string]any{"text": "a"}); err != nil {
		t.Fatalf("call without the hang file: %v", err)
	}
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := r.c.CallTool(ctx, ToolEcho, map[string]any{"text": "b"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call with the hang file: got %v, want no answer", err)
	}
	if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the hang file is still there (%v), want it removed so the next start works", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, err := r.c.Call(ctx2, "ping", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ping to the deaf server: got %v, want no answer", err)
	}
}

func TestFailStarts(t *testing.T) {
	f := filepath.Join(testenv.TempDir(t), "starts")
	opts := Options{Era: EraHandshake, FailStarts: 2, FailFile: f}
	for i := 1; i <= 2; i++ {
		var stderr strings.Builder
		err := Run(context.Background(), opts, strings.NewReader(""), io.Discard, &stderr)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 1 {
			t.Fatalf("start %d: got %v, want ExitError 1", i, err)
		}
		if !strings.Contains(stderr.String(), "simulated start failure") {
			t.Errorf("start %d: stderr %q", i, stderr.String())
		}
	}
	if err := Run(context.Background(), opts, strings.NewReader(""), io.Discard, io.Discard); err != nil {
		t.Fatalf("third start: %v", err)
	}
}

func TestSessionStateAndNotifications(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	mustInit(t, r.c, "handshake")
	for _, m := range []struct {
		method string
		params map[string]any
	}{
		{"logging/setLevel", map[string]any{"level": "info"}},
		{"resources/subscribe", map[string]any{"uri": counterURI}},
	} {
		if resp, err := r.c.Call(ctxT(t), m.method, m.params); err != nil || resp.Error != nil {
			t.Fatalf("%s: %v %s", m.method, err, resp.Raw)
		}
	}
	var info struct {
		LogLevel      string   `json:"logLevel"`
		Subscriptions []string `json:"subscriptions"`
		Initialized   bool     `json:"initialized"`
	}
	json.Unmarshal([]byte(call(t, r.c, ToolSessionInfo, nil).Text()), &info)
	if info.LogLevel != "info" || len(info.Subscriptions) != 1 || !info.Initialized {
		t.Errorf("session_info: got %+v", info)
	}
	call(t, r.c, ToolCounterIncrement, nil)
	seen := map[string]bool{}
	timeout := time.After(2 * time.Second)
	for !(seen["notifications/resources/updated"] && seen["notifications/message"]) {
		select {
		case n := <-r.c.Notifications():
			m, _ := jsonrpc.Peek(n)
			seen[m.Method] = true
		case <-timeout:
			t.Fatalf("notifications seen: %v", seen)
		}
	}
}

func TestStatelessListen(t *testing.T) {
	r := start(t, Options{Era: EraStateless})
	mustInit(t, r.c, "stateless")
	go r.c.Call(context.Background(), "subscriptions/listen", map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": []string{counterURI}}})
	wantNote(t, r.c, "notifications/subscriptions/acknowledged")
	call(t, r.c, ToolCounterIncrement, nil)
	n := wantNote(t, r.c, "notifications/resources/updated")
	if !strings.Contains(string(n), `"io.modelcontextprotocol/subscriptionId":`) {
		t.Errorf("update lacks the subscription id: %s", n)
	}
}

func wantNote(t *testing.T, c *Client, method string) []byte {
	t.Helper()
	timeout := time.After(2 * time.Second)
	for {
		select {
		case n := <-c.Notifications():
			if m, _ := jsonrpc.Peek(n); m.Method == method {
				return n
			}
		case <-timeout:
			t.Fatalf("no %s", method)
		}
	}
}

func TestParseErrorKeepsGoing(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	r.in.Write([]byte("not json\n"))
	if _, err := r.c.Call(ctxT(t), "ping", nil); err != nil {
		t.Fatal(err)
	}
}

func TestPromptsAndResources(t *testing.T) {
	r := start(t, Options{Era: EraHandshake})
	mustInit(t, r.c, "handshake")
	resp, _ := r.c.Call(ctxT(t), "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}})
	if !strings.Contains(string(resp.Result), "Please greet Ada.") {
		t.Errorf("prompts/get: %s", resp.Raw)
	}
	resp, _ = r.c.Call(ctxT(t), "resources/read", map[string]any{"uri": helloURI})
	if !strings.Contains(string(resp.Result), "Hello from") {
		t.Errorf("resources/read: %s", resp.Raw)
	}
	resp, _ = r.c.Call(ctxT(t), "resources/read", map[string]any{"uri": "example://nope"})
	if resp.Error == nil || resp.Error.Code != -32002 {
		t.Errorf("unknown resource: %s", resp.Raw)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// The hang tool makes the server deaf from its very message on: a ping
// read right after it is never answered. It used to go deaf in the tool's
// own goroutine, so the read loop could answer a ping that came in
// between, and a proxy's test saw the hang one probe late (docs/shim.md).
// Each round writes the call and the ping in one write.
func TestHangIsAtomicWithItsMessage(t *testing.T) {
	for round := range 20 {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- Run(ctx, Options{Era: EraHandshake}, inR, outW, io.Discard); outW.Close() }()
		lines := make(chan string, 16)
		go func() {
			r := jsonrpc.NewReader(outR)
			for {
				l, err := r.Next()
				if err != nil {
					close(lines)
					return
				}
				lines <- string(l)
			}
		}()
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n")
		select {
		case <-lines:
		case <-time.After(5 * time.Second):
			t.Fatal("no answer to initialize")
		}
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang"}}`+"\n"+
			`{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n")
		select {
		case l := <-lines:
			t.Fatalf("round %d: the server answered after the hang call: %s", round, l)
		case <-time.After(100 * time.Millisecond):
		}
		cancel()
		inW.Close()
		<-errc
		outR.Close()
	}
}

// TestCatalogFile: editing the catalog file changes the lists and makes
// the server announce each changed list, to a handshake-era client and on
// a stateless listen stream that asked for it; an unchanged file
// announces nothing.
func TestCatalogFile(t *testing.T) {
	f := filepath.Join(testenv.TempDir(t), "catalog")
	if err := os.WriteFile(f, []byte("tool first\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := start(t, Options{Era: EraHandshake, CatalogFile: f})
	mustInit(t, r.c, "handshake")
	if resp, _ := r.c.Call(ctxT(t), "tools/list", nil); !strings.Contains(string(resp.Result), `"first"`) {
		t.Fatalf("tools/list lacks the catalog's tool: %s", resp.Raw)
	}
	time.Sleep(3 * catalogPoll)
	select {
	case n := <-r.c.Notifications():
		t.Fatalf("unchanged catalog, got %s", n)
	default:
	}
	if err := os.WriteFile(f, []byte("tool first\ntool second\nprompt p1\nresource extra://r1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		wantNote(t, r.c, m)
	}
	if got := call(t, r.c, "second", nil).Text(); got != "second" {
		t.Errorf("catalog tool: got %q, want %q", got, "second")
	}
	if resp, _ := r.c.Call(ctxT(t), "prompts/get", map[string]any{"name": "p1"}); resp.Error != nil {
		t.Errorf("prompts/get p1: %s", resp.Raw)
	}
	if resp, _ := r.c.Call(ctxT(t), "resources/read", map[string]any{"uri": "extra://r1"}); resp.Error != nil {
		t.Errorf("resources/read extra://r1: %s", resp.Raw)
	}

	s := start(t, Options{Era: EraStateless, CatalogFile: f})
	mustInit(t, s.c, "stateless")
	go s.c.Call(context.Background(), "subscriptions/listen", map[string]any{
		"notifications": map[string]any{"promptsListChanged": true}})
	wantNote(t, s.c, "notifications/subscriptions/acknowledged")
	if err := os.WriteFile(f, []byte("prompt p2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := wantNote(t, s.c, "notifications/prompts/list_changed")
	if !strings.Contains(string(n), `"io.modelcontextprotocol/subscriptionId":`) {
		t.Errorf("list_changed lacks the subscription id: %s", n)
	}
}
