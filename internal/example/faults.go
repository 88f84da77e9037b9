package example

// Faults: what the shim's tests make the server do, beyond the flags. The
// shim's tests run this server as their child (the test binary re-executed
// with OptionsEnv set), so one server is the fixture of every package.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// OptionsEnv is the environment variable that carries Options as JSON to a
// test binary re-executed as this server (see OptionsFromEnv).
const OptionsEnv = "MCP_HEAL_EXAMPLE_OPTIONS"

// OptionsFromEnv reads Options from OptionsEnv: ok is false when it is not
// set (the process is not meant to be the server).
func OptionsFromEnv() (o Options, ok bool, err error) {
	v, ok := os.LookupEnv(OptionsEnv)
	if !ok {
		return o, false, nil
	}
	if err := json.Unmarshal([]byte(v), &o); err != nil {
		return o, true, fmt.Errorf("%s: %w", OptionsEnv, err)
	}
	return o, true, nil
}

// Faults configure misbehaviour and a log of what the server saw. The
// zero value is a well-behaved server.
type Faults struct {
	// EventLog gets a line per thing the server saw, for a test to count:
	// `start PID`, `discover`, `initialize PID` (`initialize PID muted`),
	// `initialized`, `ping`, `tools/list`, `setLevel LEVEL`, `subscribe
	// URI`, `listen`, `call TOOL KEY` (KEY: the key argument) as a call
	// arrives, `asked error=BOOL` and `closed stdout PID`.
	EventLog string
	// StartStderr is written to stderr as the process starts, before a
	// start fails: a server's last words (tests put a secret in it, which
	// a proxy must redact).
	StartStderr string
	// FailWhile: while this file exists, every start fails.
	FailWhile string
	// Stubborn ignores SIGTERM and the end of stdin: only SIGKILL ends it.
	// SIGTERM is ignored process-wide: for a server process of its own.
	Stubborn bool
	// Serial runs tool calls one at a time on the reading loop, like a
	// single-threaded server: a ping waits behind a call.
	Serial bool
	// TestTools adds the tools a proxy's tests call (testToolList).
	TestTools bool
	// GateFile: the gate tool answers once this file exists.
	GateFile string
	// NewToolAfter: from start N+1 on (counted in FailFile), tools/list
	// has one more tool, newtool: a server upgraded between two runs.
	NewToolAfter int
	// Version is the protocol version initialize answers with whatever
	// the client asked; with VersionAfter N, from start N+1 on only.
	Version      string
	VersionAfter int
	// MuteInitAfter: from start N+1 on, initialize is never answered.
	MuteInitAfter int
	// NoToolsListChanged leaves tools.listChanged out of the
	// capabilities: a server that never announces a changed list.
	NoToolsListChanged bool
	// Ignore lists request methods the server never answers (logged as
	// `ignored METHOD`), like a hand-written server that drops what it
	// does not know (server/discover, and ping when it never implemented
	// it).
	Ignore []string
	// CursorDelay: a resources/list with a cursor (the next page) is
	// answered after this long, concurrently with other requests.
	CursorDelay time.Duration
}

// faultState is a run's state for Faults.
type faultState struct {
	start  int       // this start's number (1 without a FailFile)
	stdout io.Writer // closed by the closeout tool when it can be

	mu     sync.Mutex
	asked  map[string]chan []byte // requests to the client (ask), by id
	nextID int
}

// event appends a line to the event log.
func (s *server) event(format string, a ...any) {
	if s.opts.Faults.EventLog == "" {
		return
	}
	f, err := os.OpenFile(s.opts.Faults.EventLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		s.opts.Logger.Warn("event log", "err", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", a...)
}

// startFaults runs as the process starts, after StartStderr and the
// FailFile count: FailWhile and Stubborn.
func startFaults(opts Options, stderr io.Writer) error {
	f := opts.Faults
	if f.FailWhile != "" {
		if _, err := os.Stat(f.FailWhile); err == nil {
			fmt.Fprintf(stderr, "example-server: simulated start failure: %s exists\n", f.FailWhile)
			return &ExitError{Code: 1, Reason: "simulated start failure"}
		}
	}
	if f.Stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	return nil
}

// after reports whether this start comes after start n (n > 0).
func (s *server) after(n int) bool { return n > 0 && s.f.start > n }

// noteRequest logs a request in the event log.
func (s *server) noteRequest(req request) {
	var p struct {
		Level string `json:"level"`
		URI   string `json:"uri"`
	}
	json.Unmarshal(req.Params, &p)
	switch req.Method {
	case "server/discover":
		s.event("discover")
	case "ping", "tools/list":
		s.event("%s", req.Method)
	case "logging/setLevel":
		s.event("setLevel %s", p.Level)
	case "resources/subscribe":
		s.event("subscribe %s", p.URI)
	case "subscriptions/listen":
		s.event("listen")
	}
}

// BadText is the text of the badtext tool's answer as it is on the wire
// (inside a JSON string): what a C or shell server, or a file name in a
// non-UTF-8 locale, puts in an answer. A stray byte, a surrogate encoded
// raw (CESU-8), a sequence cut short before an ASCII byte and at the end,
// and lone surrogates as JSON escapes (valid JSON, no valid UTF-16).
const BadText = "caf\xe9 \xff|\xed\xa0\x80|\xf0\x9f\x98x|\\ud800 \\udfff \\ud83d\\ude00|\xe2\x82"

// testToolList is what TestTools adds; the annotations are what a proxy's
// retry rules look at.
func testToolList() []map[string]any {
	readOnly := annotations("", true, false, false)
	none := map[string]any{}
	tools := []struct {
		name, desc string
		ann        map[string]any
	}{
		{"write", "Answers `written KEY`; destructive.", annotations("", false, false, true)},
		{"slowwrite", "Waits ms, then answers; no annotations.", none},
		{"crashread", "Like crash, but read-only.", readOnly},
		{"hang2", "Never answers; the server stays responsive.", readOnly},
		{"big", "Answers a text of `bytes` x's.", readOnly},
		{"ask", "Asks the client for roots/list and answers the first root's URI.", none},
		{"pid", "Answers the server's pid.", readOnly},
		{"gate", "Answers `through` once the gate file exists.", readOnly},
		{"closeout", "Answers `closing`, then closes stdout and lives on.", none},
		{"structured", "Answers with structuredContent.", readOnly},
		{"badtext", "Answers a text holding invalid UTF-8 and lone surrogates (BadText).", readOnly},
		{"cutshort", "Answers with a line cut short (not JSON), carrying the call's id.", readOnly},
	}
	var list []map[string]any
	for _, t := range tools {
		list = append(list, map[string]any{"name": t.name, "description": t.desc, "inputSchema": schema(nil), "annotations": t.ann})
	}
	return list
}

// testTool runs one of testToolList; ok is false for any other name.
func (s *server) testTool(ctx context.Context, id json.RawMessage, name string, a toolArgs) (result any, err error, ok bool) {
	if !s.opts.Faults.TestTools {
		return nil, nil, false
	}
	switch name {
	case "write":
		return textResult("written " + a.Key), nil, true
	case "slowwrite":
		r, err := s.slow(ctx, time.Duration(a.MS)*time.Millisecond, nil)
		return r, err, true
	case "crashread":
		code := 3
		if a.Code != nil {
			code = *a.Code
		}
		fmt.Fprintf(s.stderr, "example-server: crash tool called; exiting with code %d\n", code)
		s.crash(code, "crash tool")
		return nil, errNoReply, true
	case "hang2":
		<-ctx.Done()
		return nil, errNoReply, true
	case "big":
		return textResult(strings.Repeat("x", int(a.Bytes))), nil, true
	case "ask":
		r, err := s.ask(ctx, "roots/list")
		if err != nil {
			return nil, err, true
		}
		var resp struct {
			Result struct {
				Roots []struct {
					URI string `json:"uri"`
				} `json:"roots"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		json.Unmarshal(r, &resp)
		s.event("asked error=%t", resp.Error != nil)
		uri := ""
		if len(resp.Result.Roots) > 0 {
			uri = resp.Result.Roots[0].URI
		}
		return textResult(uri), nil, true
	case "pid":
		return textResult(strconv.Itoa(os.Getpid())), nil, true
	case "gate":
		for {
			if _, err := os.Stat(s.opts.Faults.GateFile); err == nil {
				return textResult("through"), nil, true
			}
			if err := sleep(ctx, 5*time.Millisecond); err != nil {
				return nil, err, true
			}
		}
	case "closeout":
		// Answer, then close stdout and live on: nothing it does can
		// reach the client any more.
		b, _ := json.Marshal(textResult("closing"))
		s.send(jsonrpc.ResultReply(id, b))
		if c, ok := s.f.stdout.(io.Closer); ok {
			c.Close()
		}
		s.event("closed stdout %d", os.Getpid())
		return nil, errNoReply, true
	case "badtext":
		// Raw: encoding/json would replace the invalid bytes.
		return json.RawMessage(`{"content":[{"type":"text","text":"` + BadText + `"}]}`), nil, true
	case "cutshort":
		s.send(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":{"content":[{"type":"text","text":"cut sh`...))
		return nil, errNoReply, true
	case "structured":
		return map[string]any{"content": []map[string]any{{"type": "text", "text": `{"x":1}`}}, "structuredContent": map[string]any{"x": 1}}, nil, true
	}
	return nil, nil, false
}

// ask sends a request to the client and waits for its response.
func (s *server) ask(ctx context.Context, method string) ([]byte, error) {
	s.f.mu.Lock()
	if s.f.asked == nil {
		s.f.asked = map[string]chan []byte{}
	}
	id := strconv.Quote("ask-" + strconv.Itoa(s.f.nextID))
	s.f.nextID++
	ch := make(chan []byte, 1)
	s.f.asked[id] = ch
	s.f.mu.Unlock()
	s.send(jsonrpc.NewRequest([]byte(id), method, []byte("{}")))
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// answered routes a response from the client to the ask waiting for it.
func (s *server) answered(id, line []byte) {
	s.f.mu.Lock()
	ch := s.f.asked[string(id)]
	delete(s.f.asked, string(id))
	s.f.mu.Unlock()
	if ch != nil {
		ch <- line
	}
}

// hasCursor reports whether a list request asks for a next page.
func hasCursor(params json.RawMessage) bool {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	return json.Unmarshal(params, &p) == nil && p.Cursor != nil
}
