package example

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

func readEvents(t *testing.T, path string) []string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// The event log has a line per thing the shim's tests count, in order.
func TestFaultsEventLog(t *testing.T) {
	events := filepath.Join(testenv.TempDir(t), "events")
	r := start(t, Options{Era: EraBoth, Faults: Faults{EventLog: events}})
	r.c.Call(ctxT(t), "server/discover", nil)
	mustInit(t, r.c, "stateless")
	r.c.Notify("notifications/initialized", nil)
	call(t, r.c, ToolEcho, map[string]any{"text": "x", "key": "k1"})
	r.c.Call(ctxT(t), "ping", nil)
	r.c.Call(ctxT(t), "logging/setLevel", map[string]any{"level": "debug"})
	r.c.Call(ctxT(t), "tools/list", nil)
	pid := strconv.Itoa(os.Getpid())
	want := []string{"start " + pid, "discover", "discover", "initialized", "call echo k1", "ping", "setLevel debug", "tools/list"}
	if got := readEvents(t, events); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}

// StartStderr comes first, and FailWhile fails every start while its file
// exists.
func TestFaultsFailWhile(t *testing.T) {
	dir := testenv.TempDir(t)
	opts := Options{Faults: Faults{StartStderr: "fatal: api_key=hunter2", FailWhile: filepath.Join(dir, "fail")}}
	os.WriteFile(opts.Faults.FailWhile, nil, 0o600)
	var stderr strings.Builder
	err := Run(context.Background(), opts, strings.NewReader(""), io.Discard, &stderr)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.HasPrefix(stderr.String(), "fatal: api_key=hunter2\n") {
		t.Fatalf("with the file: got %v, stderr %q; want ExitError 1 after the start line", err, stderr.String())
	}
	os.Remove(opts.Faults.FailWhile)
	if err := Run(context.Background(), opts, strings.NewReader(""), io.Discard, io.Discard); err != nil {
		t.Fatalf("without the file: %v", err)
	}
}

// The start count in FailFile turns on the later-start faults: a new tool,
// another protocol version, a mute initialize.
func TestFaultsAfterStart(t *testing.T) {
	f := filepath.Join(testenv.TempDir(t), "starts")
	opts := Options{Era: EraHandshake, FailFile: f, Faults: Faults{NewToolAfter: 1, Version: "2025-06-18", VersionAfter: 1, MuteInitAfter: 2}}
	hasNew := func(r *running) bool {
		resp, err := r.c.Call(ctxT(t), "tools/list", nil)
		return err == nil && strings.Contains(string(resp.Result), `"newtool"`)
	}
	first := start(t, opts)
	if v, err := first.c.Initialize(ctxT(t), "2025-11-25"); err != nil || v != "handshake" || hasNew(first) {
		t.Fatalf("start 1: %v %v, newtool %v; want 2025-11-25 and no newtool", v, err, hasNew(first))
	}
	second := start(t, opts)
	resp, err := second.c.Call(ctxT(t), "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	if err != nil || !strings.Contains(string(resp.Result), `"protocolVersion":"2025-06-18"`) || !hasNew(second) {
		t.Fatalf("start 2: %s %v, newtool %v; want 2025-06-18 and newtool", resp.Raw, err, hasNew(second))
	}
	third := start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := third.c.Initialize(ctx, "2025-11-25"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("start 3: initialize got %v, want no answer", err)
	}
}

func TestFaultsTestTools(t *testing.T) {
	gate := filepath.Join(testenv.TempDir(t), "gate")
	r := start(t, Options{Era: EraHandshake, Faults: Faults{TestTools: true, GateFile: gate, NoToolsListChanged: true, CursorDelay: 200 * time.Millisecond}})
	if _, err := r.c.Initialize(ctxT(t), "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{"write": "written k", "pid": strconv.Itoa(os.Getpid()), "big": "xxx", "ask": ""} {
		if got := call(t, r.c, tool, map[string]any{"key": "k", "bytes": 3}).Text(); got != want {
			t.Errorf("%s: got %q, want %q", tool, got, want)
		}
	}
	if s := call(t, r.c, "structured", nil); !strings.Contains(string(s.Result), `"structuredContent":{"x":1}`) {
		t.Errorf("structured: got %s", s.Raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := r.c.CallTool(ctx, "hang2", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hang2: got %v, want no answer", err)
	}
	if _, err := r.c.Call(ctxT(t), "ping", nil); err != nil {
		t.Errorf("ping while hang2 runs: %v", err)
	}
	gated := make(chan string, 1)
	go func() { resp, _ := r.c.CallTool(ctxT(t), "gate", nil); gated <- resp.Text() }()
	select {
	case g := <-gated:
		t.Fatalf("gate answered %q before the file existed", g)
	case <-time.After(100 * time.Millisecond):
	}
	os.WriteFile(gate, nil, 0o600)
	if g := <-gated; g != "through" {
		t.Errorf("gate: got %q", g)
	}
	began := time.Now()
	if resp, err := r.c.Call(ctxT(t), "resources/list", map[string]any{"cursor": "2"}); err != nil || resp.Error != nil || time.Since(began) < 200*time.Millisecond {
		t.Errorf("resources/list with a cursor: %v %v after %v, want an answer after CursorDelay", resp.Error, err, time.Since(began))
	}
	if resp, _ := r.c.Call(ctxT(t), "initialize", map[string]any{"protocolVersion": "2025-11-25"}); !strings.Contains(string(resp.Result), `"tools":{"listChanged":false}`) {
		t.Errorf("NoToolsListChanged: capabilities %s", resp.Result)
	}
}

func TestOptionsFromEnv(t *testing.T) {
	t.Setenv(OptionsEnv, `{"Era":"handshake","Faults":{"Serial":true,"EventLog":"/x"}}`)
	o, ok, err := OptionsFromEnv()
	if err != nil || !ok || o.Era != EraHandshake || !o.Faults.Serial || o.Faults.EventLog != "/x" {
		t.Errorf("got %+v %v %v", o, ok, err)
	}
}

// A call still running when stdin ends gets no answer: the process is
// going away, and a made-up "context canceled" error would reach the
// client through a proxy instead of the call being re-sent.
func TestNoAnswerAfterStdinEnds(t *testing.T) {
	events := filepath.Join(testenv.TempDir(t), "events")
	inR, inW := io.Pipe()
	var out strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Era: EraHandshake, Faults: Faults{EventLog: events}}, inR, &lockedWriter{b: &out}, io.Discard)
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":5000}}}`+"\n")
	testenv.WaitFor(t, 10*time.Second, "the call to reach the server", func() bool {
		return strings.Contains(strings.Join(readEvents(t, events), "\n"), "call slow")
	})
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if strings.Contains(out.String(), `"id":2`) {
		t.Errorf("the cut-short call was answered:\n%s", out.String())
	}
}
