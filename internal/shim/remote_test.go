//go:build unix

package shim

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// memConn is an in-memory upstream standing in for a remote session: it
// answers initialize and tools/list, records tools/call, and can be made to
// die with some requests marked undelivered.
type memConn struct {
	mu     *sync.Mutex // the dialer's
	recv   chan []byte
	done   chan struct{}
	exit   upstream.Exit
	calls  *[]string
	hold   bool // do not answer tools/call
	deaf   bool // answer nothing at all (a hung server)
	closed bool
}

func (c *memConn) Send(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("closed")
	}
	m, err := jsonrpc.Peek(msg)
	if err != nil || m.Kind != jsonrpc.KindRequest || c.deaf && m.Method != "tools/call" {
		return nil
	}
	id := append([]byte(nil), m.ID...)
	switch m.Method {
	case "initialize":
		c.recv <- jsonrpc.ResultReply(id, []byte(`{"protocolVersion":"2025-11-25","capabilities":{}}`))
	case "tools/list":
		c.recv <- jsonrpc.ResultReply(id, []byte(`{"tools":[{"name":"write"}]}`))
	case "tools/call":
		if gjson.GetBytes(msg, "params.name").Str == "job" {
			c.recv <- jsonrpc.ResultReply(id, []byte(`{"resultType":"task","taskId":"t1","status":"working"}`))
			return nil
		}
		*c.calls = append(*c.calls, gjson.GetBytes(msg, "params.arguments.key").String())
		if !c.hold && !c.deaf {
			c.recv <- jsonrpc.ResultReply(id, []byte(`{"content":[]}`))
		}
	case "tasks/get":
		c.recv <- jsonrpc.ErrorReply(id, jsonrpc.CodeInvalidParams, "task t1 expired", nil)
	default:
		c.recv <- jsonrpc.ResultReply(id, []byte(`{}`))
	}
	return nil
}

func (c *memConn) die(undelivered ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	for _, u := range undelivered {
		c.exit.Undelivered = append(c.exit.Undelivered, []byte(u))
	}
	c.exit.Reason = "session lost: HTTP 404" // as internal/bridge words it
	close(c.done)
	close(c.recv)
}

func (c *memConn) Recv() <-chan []byte   { return c.recv }
func (c *memConn) Done() <-chan struct{} { return c.done }
func (c *memConn) Exit() upstream.Exit   { <-c.done; return c.exit }
func (c *memConn) PID() int              { return 0 }
func (c *memConn) Close() error          { c.die(); return nil }

// memDialer hands out memConns, or fails while refuse is set.
type memDialer struct {
	mu     sync.Mutex
	refuse bool
	conns  []*memConn
	calls  []string
	hold   bool
}

func (d *memDialer) Dial(ctx context.Context) (upstream.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refuse {
		return nil, errors.New("connection refused")
	}
	c := &memConn{mu: &d.mu, recv: make(chan []byte, 100), done: make(chan struct{}), calls: &d.calls, hold: d.hold}
	d.conns = append(d.conns, c)
	return c, nil
}

func (d *memDialer) Target() string { return "https://mcp.example.com/mcp" }
func (d *memDialer) Mode() string   { return state.ModeRemote }

func (d *memDialer) last() *memConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[len(d.conns)-1]
}

// Exit.Undelivered: requests the remote never processed are re-sent
// whatever the retry policy says (write is not idempotent).
func TestRemoteUndeliveredResent(t *testing.T) {
	d := &memDialer{hold: true}
	h := newHarness(t, hopt{dialer: func(upstream.Dialer) upstream.Dialer { return d }})
	h.call("initialize", initParams)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.call("tools/list", "")
	id1, c1 := h.start("tools/call", `{"name":"write","arguments":{"key":"a"}}`)
	_, c2 := h.start("tools/call", `{"name":"write","arguments":{"key":"b"}}`)
	testenv.WaitFor(t, 5*time.Second, "both calls sent", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.calls) == 2
	})
	c := d.last()
	d.mu.Lock()
	d.hold = false
	d.mu.Unlock()
	c.die(id1)
	if r := h.wait(c1, "undelivered call"); !r.Get("result").Exists() {
		t.Errorf("undelivered non-idempotent call: got %s, want it re-sent and answered", r.Raw)
	}
	r := h.wait(c2, "delivered call")
	if r.Get("error.data.reason").String() != "not-retried" {
		t.Errorf("delivered non-idempotent call: got %s, want not-retried", r.Raw)
	}
	// One sentence about a remote server, not a process's words spliced
	// with the bridge's.
	const want = `MCP server "fake" is reconnecting: while this call was running, the remote server lost the session (HTTP 404); this call was not re-sent (the tool is not marked read-only or idempotent) and may or may not have taken effect; the new session starts fresh: what the server held only for the old session (open pages, sessions) is gone; what it saved may still be there.`
	if got := r.Get("error.message").String(); got != want {
		t.Errorf("delivered non-idempotent call:\n got %s\nwant %s", got, want)
	}
}

// A remote that stays unreachable: queued calls wait QueueTimeout, then get
// an error naming the target, what was tried and for how long.
func TestRemoteUnreachable(t *testing.T) {
	d := &memDialer{}
	h := newHarness(t, hopt{
		dialer: func(upstream.Dialer) upstream.Dialer { return d },
		opts: func(o *Options) {
			o.QueueTimeout = 300 * time.Millisecond
			o.MaxFailures = 2
			o.BackoffMin, o.BackoffMax = 10*time.Millisecond, 50*time.Millisecond
		},
	})
	h.call("initialize", initParams)
	d.mu.Lock()
	d.refuse = true
	d.mu.Unlock()
	d.last().die()
	start := time.Now()
	r := h.call("tools/list", "")
	took := time.Since(start)
	msg := r.Get("error.message").String()
	if r.Get("error.data.reason").String() != "unreachable" || !strings.Contains(msg, "https://mcp.example.com/mcp") ||
		!strings.Contains(msg, "connection refused") || !strings.Contains(msg, "attempts") ||
		!strings.Contains(msg, "is unreachable: the remote server could not be reached (") || !strings.HasSuffix(msg, "was not sent.") {
		t.Errorf("got %s", r.Raw)
	}
	if took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("answered after %v, want about the 300ms queue timeout", took)
	}
	// Back again: the next call goes through (handshake replayed).
	d.mu.Lock()
	d.refuse = false
	d.mu.Unlock()
	h.s.Restart("test")
	if r := h.call("tools/list", ""); !r.Get("result").Exists() {
		t.Errorf("after recovery: %s", r.Raw)
	}
}

// A remote session that stops answering is found by the hang probe and
// closed (an upstream without Kill is closed in the background, and Run
// waits for that); all on a fake clock, so the minute of silence and the
// ten seconds of probe take no time.
func TestRemoteHang(t *testing.T) {
	d := &memDialer{hold: true}
	h := newHarness(t, hopt{
		fakeClock: true,
		dialer:    func(upstream.Dialer) upstream.Dialer { return d },
		opts:      func(o *Options) { o.HangAfter = time.Minute; o.PingTimeout = 10 * time.Second },
	})
	h.call("initialize", initParams)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.call("tools/list", "")
	hung := d.last()
	d.mu.Lock()
	hung.deaf = true
	d.hold = false
	d.mu.Unlock()
	start := time.Now()
	_, ch := h.start("tools/call", `{"name":"write","arguments":{"key":"a"}}`)
	testenv.WaitFor(t, 5*time.Second, "the call sent", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return len(d.calls) == 1
	})
	h.silenceUntilKilled(time.Minute + 20*time.Second)
	r := h.wait(ch, "hung call")
	if r.Get("error.data.reason").String() != "not-retried" || !strings.Contains(r.Get("error.message").String(), "is reconnecting: while this call was running, the remote server hung, so mcp-heal stopped it (tools/call was outstanding for 1m") {
		t.Errorf("hung call: got %s", r.Raw)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v of real time", took)
	}
	if r := h.call("tools/list", ""); !r.Get("result").Exists() {
		t.Errorf("after the hang: %s", r.Raw)
	}
	d.mu.Lock()
	n := len(d.conns)
	d.mu.Unlock()
	if n != 2 || !hung.closed {
		t.Errorf("%d sessions, hung one closed %v", n, hung.closed)
	}
}

// A remote server's task outlives a lost session (it is created durably
// before its handle is given), so a lost connection is no proof it ended:
// the server's own answer about it passes unchanged, where a stdio
// server's would be reworded as gone (tasks.go,
// interop.TestTasksGoneAfterRespawn).
func TestRemoteTaskNotTakenAsGone(t *testing.T) {
	d := &memDialer{}
	h := newHarness(t, hopt{dialer: func(upstream.Dialer) upstream.Dialer { return d }})
	h.call("initialize", initParams)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r := h.call("tools/call", `{"name":"job","arguments":{}}`); r.Get("result.taskId").Str != "t1" {
		t.Fatalf("tools/call: %s; want the task handle", r.Raw)
	}
	first := d.last()
	first.die()
	testenv.WaitFor(t, 5*time.Second, "a new session", func() bool { return d.last() != first })
	r := h.call("tasks/get", `{"taskId":"t1"}`)
	if r.Get("error.code").Int() != jsonrpc.CodeInvalidParams || r.Get("error.message").Str != "task t1 expired" {
		t.Errorf("tasks/get after the session was lost: %s; want the server's own -32602", r.Raw)
	}
}
