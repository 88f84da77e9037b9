package shim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// reinject sends a new server of run r the client's own request line
// (initialize or server/discover, named method) within ReplayTimeout and
// returns its answer; none, or an error answer, is an error that says so.
func (s *Shim) reinject(ctx context.Context, r *run, method string, line []byte, dead <-chan struct{}) ([]byte, error) {
	resp, err := s.inject(ctx, r, line, s.o.ReplayTimeout, dead)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if e := gjson.GetBytes(resp, "error"); e.Exists() {
		return nil, fmt.Errorf("%s answered with an error; %s", method, text.Said("the server", e.Get("message").String()))
	}
	return resp, nil
}

// replay brings a new server to the client's session: in the handshake era
// the client's own initialize (result swallowed, protocol version checked),
// notifications/initialized, the last logging/setLevel and every resource
// subscription. The stateless era has no session: the server is asked the
// client's server/discover (rediscover), and open subscriptions/listen
// requests are re-sent with the queue.
func (s *Shim) replay(ctx context.Context, r *run, dead <-chan struct{}) error {
	c := r.conn
	s.mu.Lock()
	ss := s.sess
	subs := ss.subList()
	s.mu.Unlock()
	if ss.era == EraStateless {
		return s.rediscover(ctx, r, ss, dead)
	}
	if ss.era != EraHandshake || ss.initLine == nil {
		return nil
	}
	resp, err := s.reinject(ctx, r, "initialize", ss.initLine, dead)
	if err != nil {
		return err
	}
	if v := gjson.GetBytes(resp, "result.protocolVersion").String(); v != ss.version {
		// The client negotiated ss.version and will keep speaking it; a
		// server that now answers otherwise is still used, and said so.
		msg := fmt.Sprintf("restarted server negotiated protocol version %s, the client uses %q", text.Quote(v), ss.version)
		s.log.Warn(msg)
		s.mu.Lock()
		s.lastErr = msg
		s.mu.Unlock()
	}
	init := ss.initializedLine
	if init == nil {
		init = jsonrpc.NewNotification("notifications/initialized", nil)
	}
	s.sendMu.Lock()
	err = c.Send(init)
	s.sendMu.Unlock()
	if err != nil {
		return fmt.Errorf("initialized: %w", err)
	}
	s.mu.Lock()
	s.sess.replayedInit = true
	s.mu.Unlock()
	if ss.setLevel != nil {
		if _, err := s.inject(ctx, r, ss.setLevel, s.o.ReplayTimeout, dead); err != nil {
			return fmt.Errorf("logging/setLevel: %w", err)
		}
	}
	for _, uri := range subs {
		params := fmt.Appendf(nil, `{"uri":%s}`, jsonString(uri))
		if _, err := s.inject(ctx, r, jsonrpc.NewRequest([]byte("0"), "resources/subscribe", params), s.o.ReplayTimeout, dead); err != nil {
			return fmt.Errorf("resources/subscribe %s: %w", uri, err)
		}
	}
	if ss.toolsCap {
		s.refreshTools(ctx, r, dead)
	}
	return nil
}

// refreshTools asks the new server for its tools: the retry policy must
// follow the new server's annotations, and when its catalog differs from
// the one the client last listed, and the first InitializeResult declared
// tools.listChanged, the client is told (notifications/tools/list_changed),
// as the server itself could have. A failure here is not fatal.
func (s *Shim) refreshTools(ctx context.Context, r *run, dead <-chan struct{}) {
	resp, err := s.inject(ctx, r, jsonrpc.NewRequest([]byte("0"), "tools/list", nil), s.o.ReplayTimeout, dead)
	if err != nil || !gjson.GetBytes(resp, "result.tools").IsArray() {
		return
	}
	tools := gjson.GetBytes(resp, "result.tools").Raw
	s.mu.Lock()
	s.sess.notePolicies(resp)
	changed := s.sess.toolsSeen != nil && !gjson.GetBytes(resp, "result.nextCursor").Exists() && string(s.sess.toolsSeen) != tools
	notify := changed && s.sess.toolsListChanged
	if changed {
		s.sess.toolsSeen = []byte(tools)
	}
	s.mu.Unlock()
	if changed {
		s.event("tools-changed", "notified", notify)
	}
	if notify {
		s.writeOut(jsonrpc.NewNotification("notifications/tools/list_changed", nil))
	}
}

var (
	errConnDied = errors.New("the server exited")
	errTimeout  = errors.New("no answer in time")
)

// inject sends req (its id replaced by a fresh injected id) on r's
// connection and waits for the answer, which never reaches the client. It
// gives up when the connection dies (dead), after timeout, or when ctx
// ends (the shim is stopping: a server that does not answer must not hold
// the shutdown for the whole timeout).
func (s *Shim) inject(ctx context.Context, r *run, req []byte, timeout time.Duration, dead <-chan struct{}) ([]byte, error) {
	c := r.conn
	s.mu.Lock()
	var id []byte
	for {
		s.nextInjID++
		id = fmt.Appendf(nil, `"mcp-heal-%d"`, s.nextInjID)
		if s.inflight[string(id)] == nil {
			break
		}
	}
	e := &entry{id: id, injected: true, waiter: make(chan []byte, 1), run: r, at: s.clk.Now(), method: gjson.GetBytes(req, "method").String()}
	s.inflight[string(id)] = e
	s.mu.Unlock()
	line := jsonrpc.ReplaceID(req, id)
	t := s.clk.NewTimer(timeout)
	defer t.Stop()
	sent := make(chan error, 1)
	// The send runs apart so that a server that stopped reading its stdin
	// (or a writer stuck behind one) still times out; it ends when the
	// connection is killed.
	go func() {
		s.sendMu.Lock()
		defer s.sendMu.Unlock()
		sent <- c.Send(line)
	}()
	forget := func() {
		s.mu.Lock()
		if s.inflight[string(id)] == e {
			delete(s.inflight, string(id))
		}
		s.mu.Unlock()
	}
	for {
		select {
		case err := <-sent:
			if err != nil {
				forget()
				return nil, fmt.Errorf("send: %w", err)
			}
			sent = nil
		case r, ok := <-e.waiter:
			if !ok {
				return nil, errConnDied
			}
			return r, nil
		case <-dead:
			forget()
			return nil, errConnDied
		case <-t.C():
			forget()
			return nil, errTimeout
		case <-ctx.Done():
			forget()
			return nil, ctx.Err()
		}
	}
}
