package bridge

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Messages a client sends, as Claude Code 2.1.328 sends them.
const (
	initParams  = `{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bridge-test","version":"1"}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// client drives one Conn the way the shim does: it sends requests, reads
// Recv, answers server-to-client requests (roots/list) and waits for the
// response with a given id.
type client struct {
	t    testing.TB
	c    upstream.Conn
	next atomic.Int64
}

func dialClient(t testing.TB, d *Dialer) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := d.Dial(ctx)
	if err != nil {
		t.Fatalf("dial %s: %v", d.Target(), err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c}
}

// initialize runs the handshake and returns the result.
func (cl *client) initialize() []byte {
	cl.t.Helper()
	res, err := cl.call("initialize", initParams)
	if err != nil {
		cl.t.Fatalf("initialize: %v", err)
	}
	if err := cl.c.Send([]byte(initialized)); err != nil {
		cl.t.Fatalf("initialized: %v", err)
	}
	return res
}

// errDied is returned by call when the Conn died first.
type errDied struct{ ex upstream.Exit }

func (e *errDied) Error() string { return "connection died: " + e.ex.Reason }

// call sends a request and waits for its response (the whole line).
func (cl *client) call(method, params string) ([]byte, error) {
	id := fmt.Appendf(nil, "%d", cl.next.Add(1))
	return cl.callID(id, method, params, 60*time.Second)
}

func (cl *client) callID(id []byte, method, params string, timeout time.Duration) ([]byte, error) {
	var p []byte
	if params != "" {
		p = []byte(params)
	}
	if err := cl.c.Send(jsonrpc.NewRequest(id, method, p)); err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case msg, ok := <-cl.c.Recv():
			if !ok {
				<-cl.c.Done()
				return nil, &errDied{cl.c.Exit()}
			}
			m, err := jsonrpc.Peek(msg)
			if err != nil {
				cl.t.Errorf("server sent an invalid message %q: %v", msg, err)
				continue
			}
			switch m.Kind {
			case jsonrpc.KindRequest:
				cl.answer(m, msg)
			case jsonrpc.KindResponse:
				if idEqual(m.ID, id) {
					return msg, nil
				}
			}
		case <-t.C:
			return nil, fmt.Errorf("%s: no response in %s", method, timeout)
		}
	}
}

func (cl *client) answer(m jsonrpc.Msg, msg []byte) {
	var reply []byte
	switch m.Method {
	case "roots/list":
		reply = jsonrpc.ResultReply(m.ID, []byte(`{"roots":[]}`))
	case "ping":
		reply = jsonrpc.ResultReply(m.ID, []byte(`{}`))
	default:
		reply = jsonrpc.ErrorReply(m.ID, jsonrpc.CodeMethodNotFound, "not supported by the test client", nil)
	}
	cl.c.Send(reply)
}

// echo calls a server's echo tool and checks the text came back.
func (cl *client) echo(tool, arg, text string) error {
	res, err := cl.call("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{%q:%q}}`, tool, arg, text))
	if err != nil {
		return err
	}
	if e := gjson.GetBytes(res, "error"); e.Exists() {
		return fmt.Errorf("error response: %s", e.Raw)
	}
	if !strings.Contains(gjson.GetBytes(res, "result.content.0.text").Str, text) {
		return fmt.Errorf("unexpected result: %s", res)
	}
	return nil
}

// waitDead waits for the Conn to die and returns its Exit.
func (cl *client) waitDead(timeout time.Duration) upstream.Exit {
	cl.t.Helper()
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case _, ok := <-cl.c.Recv():
			if !ok {
				<-cl.c.Done()
				return cl.c.Exit()
			}
		case <-t.C:
			cl.t.Fatalf("connection still alive after %s", timeout)
		}
	}
}
