package probe

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/text"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// connTransport carries a probe over an upstream.Conn: a child process
// started by proc, or a remote session opened by bridge, the same
// connections the shim uses, so the probe sees a server as the shim would.
// One goroutine uses it.
type connTransport struct {
	c upstream.Conn

	mu      sync.Mutex
	nonJSON string // first line on stdout that is not a JSON-RPC object
}

// errExited is the connection ending (the process exited, the remote
// session died) before the answer came.
var errExited = errors.New("process exited")

func (t *connTransport) firstNonJSON() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nonJSON
}

func (t *connTransport) notify(ctx context.Context, method string, params any) error {
	return t.send(notification(method, params))
}

func (t *connTransport) send(msg []byte) error {
	if err := t.c.Send(msg); err != nil {
		// A write to a connection that just died: report the death (and
		// so the exit status), not EPIPE.
		select {
		case <-t.c.Done():
			return errExited
		case <-time.After(time.Second):
			return err
		}
	}
	return nil
}

func (t *connTransport) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	if err := t.send(request(id, method, params)); err != nil {
		return nil, err
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case line, ok := <-t.c.Recv():
			if !ok {
				return nil, errExited
			}
			if jsoncheck.Valid(line) != nil || line[0] != '{' {
				t.mu.Lock()
				if t.nonJSON == "" {
					t.nonJSON = text.ClipBytes(line, 120)
				}
				t.mu.Unlock()
				continue
			}
			if res, err, ok := response(line, id); ok {
				return res, err
			}
			if reply := answerServerRequest(line); reply != nil && gjson.GetBytes(line, "method").Exists() {
				_ = t.c.Send(reply)
			}
		}
	}
}
