package keep

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// conn is a kept server's connection, as the shim sees it: the process,
// plus the translation that keeps one client's session apart from the
// previous one's.
type conn struct {
	p   *proc.Process
	g   *guardian.Guardian
	log *slog.Logger
	tag string // `k<epoch>:`, the prefix of every request id sent upstream

	recv   chan []byte
	inject chan []byte // replies made here, delivered in order with the server's

	mu          sync.Mutex
	resume      *Session // set until the new client's initialize is answered
	swallowInit bool
	initIDs     map[string]bool // upstream ids of initialize requests in flight
	subs        map[string]bool
	// hold: a client is taking over the session and has not entered the
	// operation phase yet; the list_changed it must hear wait in announce
	// (see announceLater).
	hold     bool
	announce []string
}

var _ upstream.Conn = (*conn)(nil)

// newConn wraps p. resume is the session of the client that was attached
// before (nil for a server started for this shim).
func newConn(p *proc.Process, g *guardian.Guardian, epoch int, resume *Session, log *slog.Logger) *conn {
	c := &conn{
		p: p, g: g, log: log, tag: "k" + strconv.Itoa(epoch) + ":",
		recv: make(chan []byte, 64), inject: make(chan []byte, 16),
		resume: resume, initIDs: map[string]bool{}, subs: map[string]bool{},
	}
	if resume != nil {
		for _, u := range resume.Subs {
			c.subs[u] = true
		}
		c.hold = len(resume.Init) > 0
		c.announce = append(c.announce, resume.ListChanged...)
		if resume.CatalogChanged && !slices.Contains(c.announce, toolsChanged) {
			c.announce = append(c.announce, toolsChanged)
		}
	}
	go c.forward()
	return c
}

func (c *conn) Recv() <-chan []byte   { return c.recv }
func (c *conn) Done() <-chan struct{} { return c.p.Done() }
func (c *conn) Exit() upstream.Exit   { return c.p.Exit() }
func (c *conn) PID() int              { return c.p.PID() }
func (c *conn) Close() error          { return c.p.Close() }
func (c *conn) Kill(reason string)    { c.p.Kill(reason) }
func (c *conn) Flush() error          { return c.p.Flush() }

// LeaveRunning leaves the server running under its guardian for the next
// client: the shim is going away (client EOF, SIGTERM).
func (c *conn) LeaveRunning() {
	c.g.Detach()
	c.p.Detach()
}

// Send translates and sends one message.
func (c *conn) Send(msg []byte) error {
	out, ok := c.outbound(msg)
	if !ok {
		return nil
	}
	return c.p.Send(out)
}

// SendLater is Send, buffered (see proc.Process.SendLater).
func (c *conn) SendLater(msg []byte) error {
	out, ok := c.outbound(msg)
	if !ok {
		return nil
	}
	return c.p.SendLater(out)
}

// outbound returns what to send upstream for msg; false: nothing (it was
// answered here or swallowed).
func (c *conn) outbound(msg []byte) ([]byte, bool) {
	m, err := jsonrpc.Peek(msg)
	if err != nil {
		return msg, true
	}
	switch m.Kind {
	case jsonrpc.KindRequest:
		switch m.Method {
		case "initialize", "ping", "server/discover":
			// Not yet in the operation phase; server/discover answered
			// -32601 is followed by initialize (Claude Code 2.1.328).
		default:
			c.endHold()
		}
		switch m.Method {
		case "initialize":
			if c.takeOver(msg, m) {
				return nil, false
			}
			c.mu.Lock()
			c.initIDs[string(m.ID)] = true
			c.mu.Unlock()
		case "resources/subscribe", "resources/unsubscribe":
			c.noteSub(m.Method, gjson.GetBytes(msg, "params.uri").String())
		case "subscriptions/listen":
			// A stream the server keeps open: if this shim dies, the
			// guardian cancels it (nobody else knows its id).
			_ = tell(c.g, note{Listen: c.upID(m.ID), Open: true})
		}
		return jsonrpc.ReplaceID(msg, c.upID(m.ID)), true
	case jsonrpc.KindNotification:
		switch m.Method {
		case "notifications/initialized":
			c.mu.Lock()
			swallow := c.swallowInit
			c.swallowInit = false
			c.mu.Unlock()
			if swallow {
				c.endHold()
				return nil, false
			}
		case "notifications/cancelled":
			if r := gjson.GetBytes(msg, "params.requestId"); r.Exists() {
				up := c.upID([]byte(r.Raw))
				_ = tell(c.g, note{Listen: up})
				if out, err := sjson.SetRawBytes(msg, "params.requestId", up); err == nil {
					return out, true
				}
			}
		}
	case jsonrpc.KindResponse:
		// The client answered a server->client request: no longer open.
		_ = tell(c.g, note{ReqID: m.ID})
	}
	return msg, true
}

// takeOver answers the first initialize of a client attaching to a
// running server from the InitializeResult the server gave the previous
// client, when the protocol versions agree. When they do not, the server
// is restarted: the shim re-sends the initialize to the new one. It
// reports whether the initialize was dealt with (not to be sent).
func (c *conn) takeOver(msg []byte, m jsonrpc.Msg) bool {
	c.mu.Lock()
	r := c.resume
	c.resume = nil
	c.mu.Unlock()
	if r == nil || len(r.Init) == 0 {
		return false
	}
	want := gjson.GetBytes(msg, "params.protocolVersion").String()
	if want != r.Version {
		// Not sent: the server dies first, and the shim re-sends the
		// initialize (always safe to) to the fresh one.
		c.log.Warn("the client asks for another protocol version than the kept server speaks: restarting it", "kept", r.Version, "asked", want)
		c.p.Kill("protocol version " + want + " asked, the kept server speaks " + r.Version + ": restarted")
		return true
	}
	c.mu.Lock()
	c.swallowInit = true
	old := c.subs
	c.subs = map[string]bool{}
	c.mu.Unlock()
	c.inject <- jsonrpc.ResultReply(m.ID, r.Init)
	// The new client holds none of the old one's subscriptions.
	for u := range old {
		req := `{"jsonrpc":"2.0","id":"` + c.tag + `unsub","method":"resources/unsubscribe","params":{"uri":` + strconv.Quote(u) + `}}`
		_ = c.p.Send([]byte(req))
	}
	if len(old) > 0 {
		_ = tell(c.g, note{Session: &Session{Subs: []string{}}})
	}
	return true
}

// toolsChanged is what Session.CatalogChanged stands for.
const toolsChanged = "notifications/tools/list_changed"

// announceLater reports whether a list_changed from the server is kept
// for later (and keeps it): the client taking over the session hears the
// lists that changed while nobody was attached, or while it was
// attaching, once it has entered the operation phase, after its
// notifications/initialized (lifecycle, 2025-11-25). Before that, a client
// may have no handler for it yet: the TypeScript SDK's connect() returns
// only after sending initialized, and a notification without a handler is
// dropped.
func (c *conn) announceLater(method string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.hold {
		return false
	}
	if !slices.Contains(c.announce, method) {
		c.announce = append(c.announce, method)
	}
	return true
}

// endHold ends the wait of announceLater. After an initialize answered
// here (the client said initialized, or skipped it and sent a request),
// the client hears what was kept. A client that sends requests without an
// initialize speaks the stateless era (2026-07-28): list changes travel
// only on the subscriptions/listen streams it opens, and it lists afresh,
// so there is nothing to tell it.
func (c *conn) endHold() {
	c.mu.Lock()
	if !c.hold {
		c.mu.Unlock()
		return
	}
	c.hold = false
	announce := c.announce
	c.announce = nil
	answered := c.resume == nil
	c.mu.Unlock()
	if !answered {
		return
	}
	for _, method := range announce {
		c.inject <- jsonrpc.NewNotification(method, nil)
	}
}

func (c *conn) noteSub(method, uri string) {
	if uri == "" {
		return
	}
	c.mu.Lock()
	if method == "resources/subscribe" {
		c.subs[uri] = true
	} else {
		delete(c.subs, uri)
	}
	list := make([]string, 0, len(c.subs))
	for u := range c.subs {
		list = append(list, u)
	}
	c.mu.Unlock()
	_ = tell(c.g, note{Session: &Session{Subs: list}})
}

// upID is the id a request of this client carries upstream: the raw id
// behind the attach's tag, as a JSON string.
func (c *conn) upID(raw []byte) []byte {
	b, _ := json.Marshal(c.tag + string(raw))
	return b
}

// forward delivers the server's messages, translated, and the replies
// made here.
func (c *conn) forward() {
	defer close(c.recv)
	in := c.p.Recv()
	for {
		select {
		case line := <-c.inject:
			c.recv <- line
		case line, ok := <-in:
			if !ok {
				return
			}
			if out, keep := c.inbound(line); keep {
				c.recv <- out
			}
		}
	}
}

// inbound translates one message from the server; false: drop it.
func (c *conn) inbound(line []byte) ([]byte, bool) {
	m, err := jsonrpc.PeekAnyText(line)
	if err != nil {
		return line, true // the shim drops and logs it
	}
	switch m.Kind {
	case jsonrpc.KindResponse:
		var id string
		if json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, "k") {
			return line, true
		}
		if !strings.HasPrefix(id, c.tag) {
			c.log.Debug("dropped a response to a request of an earlier client of the kept server", "id", id)
			return nil, false
		}
		raw := id[len(c.tag):]
		if raw == "unsub" {
			return nil, false
		}
		c.mu.Lock()
		isInit := c.initIDs[raw]
		delete(c.initIDs, raw)
		c.mu.Unlock()
		if isInit && !m.IsError {
			res := gjson.GetBytes(line, "result")
			_ = tell(c.g, note{Session: &Session{Init: json.RawMessage(res.Raw), Version: res.Get("protocolVersion").String()}})
		}
		return jsonrpc.ReplaceID(line, []byte(raw)), true
	case jsonrpc.KindRequest:
		// Open until the client answers; if the shim dies first, the
		// guardian answers it.
		_ = tell(c.g, note{ReqID: m.ID, Open: true})
	case jsonrpc.KindNotification:
		if isListChanged(m.Method) && !gjson.GetBytes(line, subIDPath).Exists() && c.announceLater(m.Method) {
			return nil, false
		}
		// A subscriptions/listen stream (2026-07-28) names its request in
		// every notification: give the client back its own id, and drop
		// what a listen of an earlier client still sends.
		r := gjson.GetBytes(line, subIDPath)
		if r.Type != gjson.String || !strings.HasPrefix(r.Str, "k") {
			return line, true
		}
		if !strings.HasPrefix(r.Str, c.tag) {
			return nil, false
		}
		if out, err := sjson.SetRawBytes(line, subIDPath, []byte(r.Str[len(c.tag):])); err == nil {
			return out, true
		}
	}
	return line, true
}

// subIDPath is where a 2026-07-28 notification names the
// subscriptions/listen request it belongs to.
const subIDPath = `params._meta.io\.modelcontextprotocol/subscriptionId`
