package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Turn is one scripted assistant answer of the main loop.
type Turn struct {
	// Before runs before the answer is sent: a failure between two calls
	// (kill -9 a server, SIGSTOP it, restart an HTTP server, sleep). An
	// error is kept and reported by Model.Err.
	Before func() error
	// After runs in its own goroutine once the answer has been sent: a
	// failure while the tool call the answer asks for is running.
	After func() error
	// Text is the answer's text block (none when empty and Tools is set).
	Text string
	// Tools are tool_use blocks; a turn with tools ends with stop_reason
	// "tool_use", one without with "end_turn".
	Tools []ToolUse
}

// ToolUse is one tool_use block.
type ToolUse struct {
	Name  string // e.g. mcp__srv__echo
	Input any    // marshalled to JSON; nil is {}
}

// Model is a scripted stand-in for the Anthropic Messages API on a loopback
// port. Every request of Claude Code's main loop gets the next Turn of the
// script; side requests (title generation, quota checks, anything that does
// not look like the main loop) get a short text answer and do not advance
// the script. Every request is recorded.
type Model struct {
	URL string

	ln     net.Listener
	srv    *http.Server
	script []Turn
	wg     sync.WaitGroup // After actions

	mu       sync.Mutex
	reqs     []*Request
	answered map[int]time.Time // turn index -> when its answer was sent
	errs     []error
	changed  chan struct{} // closed and replaced on every main request and answered turn
}

// NewModel starts a stand-in model serving script on 127.0.0.1:0.
func NewModel(script ...Turn) (*Model, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Model{
		URL:      "http://" + ln.Addr().String(),
		ln:       ln,
		script:   script,
		answered: map[int]time.Time{},
		changed:  make(chan struct{}),
	}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(ln)
	return m, nil
}

// Close stops the server and waits for running After actions.
func (m *Model) Close() error {
	err := m.srv.Close()
	m.wg.Wait()
	return err
}

// Err returns the errors of Before/After actions and malformed requests.
func (m *Model) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return errors.Join(m.errs...)
}

func (m *Model) fail(err error) {
	m.mu.Lock()
	m.errs = append(m.errs, err)
	m.mu.Unlock()
}

// Requests returns every request received so far, in arrival order.
func (m *Model) Requests() []*Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Request(nil), m.reqs...)
}

// Main returns the main-loop requests in arrival order.
func (m *Model) Main() []*Request {
	var out []*Request
	for _, r := range m.Requests() {
		if r.Main {
			out = append(out, r)
		}
	}
	return out
}

// ForTurn returns the first main-loop request answered with turn i: the
// conversation as the model saw it when it wrote turn i (so ForTurn(i+1)
// carries the results of turn i's tool calls). Nil if none yet.
func (m *Model) ForTurn(i int) *Request {
	for _, r := range m.Main() {
		if r.Turn == i {
			return r
		}
	}
	return nil
}

// AnsweredAt reports when turn i's answer was sent.
func (m *Model) AnsweredAt(i int) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.answered[i]
	return t, ok
}

// WaitTurn waits until turn i has been requested (its request arrived and
// was answered) or the timeout passes.
func (m *Model) WaitTurn(i int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		m.mu.Lock()
		_, ok := m.answered[i]
		ch := m.changed
		m.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

// WaitRequest waits until a main-loop request for which ok holds has
// arrived, and returns the first such request; nil when the timeout passes
// first. For what arrives in a request Claude Code decides on its
// own (a background task's notification, a queued prompt), where the
// turn index it gets is not known in advance.
func (m *Model) WaitRequest(ok func(*Request) bool, timeout time.Duration) *Request {
	deadline := time.After(timeout)
	for {
		m.mu.Lock()
		ch := m.changed
		m.mu.Unlock()
		if r := m.Find(ok); r != nil {
			return r
		}
		select {
		case <-ch:
		case <-deadline:
			return nil
		}
	}
}

// Find returns the first main-loop request for which ok holds, nil if none.
func (m *Model) Find(ok func(*Request) bool) *Request {
	for _, r := range m.Main() {
		if ok(r) {
			return r
		}
	}
	return nil
}

func (m *Model) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Turn: -1}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	case strings.HasSuffix(r.URL.Path, "/count_tokens"):
		m.record(req)
		writeJSON(w, map[string]any{"input_tokens": 1000})
		return
	default:
		// Anything else Claude Code may try offline (feature flags, metrics,
		// account look-ups): a harmless empty answer.
		m.record(req)
		writeJSON(w, map[string]any{})
		return
	}
	if err := req.parse(); err != nil {
		m.fail(fmt.Errorf("model: malformed /v1/messages request: %v", err))
		m.record(req)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"malformed"}}`, http.StatusBadRequest)
		return
	}
	req.Main = req.isMainLoop()
	turn := Turn{Text: "OK."}
	if req.Main {
		// The turn index is the number of assistant messages already in the
		// conversation, so a request Claude Code retries gets the same turn
		// again instead of skipping one.
		req.Turn = req.assistantTurns()
		if req.Turn < len(m.script) {
			turn = m.script[req.Turn]
		} else {
			turn = Turn{Text: "Done."}
		}
	}
	m.record(req)
	if req.Main {
		m.notify() // WaitRequest looks at every main request as it arrives
	}
	if req.Main && turn.Before != nil {
		if err := turn.Before(); err != nil {
			m.fail(fmt.Errorf("model: turn %d: before: %w", req.Turn, err))
		}
	}
	msg := answer(req, turn)
	if req.Stream {
		writeSSE(w, msg)
	} else {
		writeJSON(w, msg)
	}
	if !req.Main {
		return
	}
	m.mu.Lock()
	if _, ok := m.answered[req.Turn]; !ok {
		m.answered[req.Turn] = time.Now()
	}
	m.mu.Unlock()
	m.notify()
	if turn.After != nil {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			if err := turn.After(); err != nil {
				m.fail(fmt.Errorf("model: turn %d: after: %w", req.Turn, err))
			}
		}()
	}
}

// notify wakes WaitTurn and WaitRequest.
func (m *Model) notify() {
	m.mu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
}

func (m *Model) record(r *Request) {
	m.mu.Lock()
	r.Seq = len(m.reqs)
	m.reqs = append(m.reqs, r)
	m.mu.Unlock()
}

// Call is one scripted tool call as the model saw it: asked for in the
// answer to turn Turn, answered in the request for turn Turn+1.
type Call struct {
	Turn   int
	ID     string
	Name   string
	Start  time.Time  // the answer asking for it was sent
	End    time.Time  // the request carrying its result arrived
	Result ToolResult // valid when Done
	Done   bool
}

// Duration is how long the call took as the model saw it (hooks included).
func (c Call) Duration() time.Duration {
	if !c.Done {
		return 0
	}
	return c.End.Sub(c.Start)
}

// OK reports whether the model got a successful result.
func (c Call) OK() bool { return c.Done && !c.Result.IsError }

// Calls returns the scripted tool calls that were asked for, in order.
func (m *Model) Calls() []Call {
	var out []Call
	for i, turn := range m.script {
		start, ok := m.AnsweredAt(i)
		if !ok {
			break
		}
		next := m.ForTurn(i + 1)
		for j, tu := range turn.Tools {
			c := Call{Turn: i, ID: ToolUseID(i, j), Name: tu.Name, Start: start}
			if next != nil {
				c.Result, c.Done = next.ToolResult(c.ID)
				c.End = next.At
			}
			out = append(out, c)
		}
	}
	return out
}
