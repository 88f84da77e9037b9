// Package example is the built-in example MCP server behind
// `mcp-heal example-server`: a small, real stdio server written against the
// MCP specification directly (no SDK), speaking both protocol eras. It is the
// server `mcp-heal demo` heals and the fixture the other packages' tests run
// the shim against, so it has tools with every retry-relevant annotation,
// tools that crash or hang on request, and start-up faults driven by flags.
package example

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// Eras the server can speak.
const (
	EraBoth      = "both"      // answer server/discover and initialize
	EraHandshake = "handshake" // -32601 to server/discover, like most servers today
	EraStateless = "stateless" // server/discover only; -32601 to initialize
)

// StatelessVersion is the protocol version of the stateless era.
const StatelessVersion = "2026-07-28"

// handshakeVersions are the handshake-era versions the server accepts, newest
// first; an unknown requested version is answered with the newest (2025-11-25
// lifecycle: "the server MUST respond with another protocol version it
// supports").
var handshakeVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Meta keys of the stateless era (2026-07-28, per-request _meta).
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// Run serves one client on stdin/stdout until stdin ends, ctx is cancelled
// or a tool asks the process to exit (*ExitError). stderr gets fault
// messages a real server would print.
//
// The reader goroutine cannot be interrupted: when Run returns because of a
// crash, it stays blocked on stdin until the process exits, which is what
// the caller does with an *ExitError.
func Run(ctx context.Context, opts Options, stdin io.Reader, stdout, stderr io.Writer) error {
	if opts.Era == "" {
		opts.Era = EraBoth
	}
	switch opts.Era {
	case EraBoth, EraHandshake, EraStateless:
	default:
		return fmt.Errorf("unknown era %q (want both, handshake or stateless)", opts.Era)
	}
	if opts.Name == "" {
		opts.Name = "mcp-heal-example"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Faults.StartStderr != "" {
		fmt.Fprintln(stderr, opts.Faults.StartStderr)
	}
	n, err := failStart(opts, stderr)
	if err != nil {
		return err
	}
	if err := startFaults(opts, stderr); err != nil {
		return err
	}
	s := &server{
		opts:    opts,
		out:     jsonrpc.NewWriter(stdout),
		stderr:  stderr,
		exit:    make(chan *ExitError, 1),
		calls:   map[string]context.CancelFunc{},
		subs:    map[string]bool{},
		listens: map[string]listen{},
		values:  map[string]string{},
		started: time.Now(),
		f:       faultState{start: n, stdout: stdout},
	}
	s.event("start %d", os.Getpid())
	if opts.JunkStdout {
		s.junk("example-server starting (this line is not JSON-RPC)")
	}
	if opts.StartDelay > 0 {
		select {
		case <-time.After(opts.StartDelay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.CatalogFile != "" {
		s.extra = readCatalog(opts.CatalogFile)
		s.wg.Add(1)
		go s.watchCatalog(ctx)
	}

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		r := jsonrpc.NewReader(stdin)
		for {
			line, err := r.Next()
			if err != nil {
				readErr <- err
				return
			}
			cp := append([]byte(nil), line...)
			select {
			case lines <- cp:
			case <-ctx.Done():
				return
			}
		}
	}()

	for {
		select {
		case line := <-lines:
			s.handleLine(ctx, line)
		case e := <-s.exit:
			return e
		case err := <-readErr:
			if s.isHung() || opts.Faults.Stubborn {
				// A hung server does not notice its client left: it has
				// to be signalled, like a real stuck process.
				select {
				case <-ctx.Done():
					return ctx.Err()
				case e := <-s.exit:
					return e
				}
			}
			cancel()
			s.wg.Wait()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-ctx.Done():
			s.wg.Wait()
			return ctx.Err()
		}
	}
}

// server is the state of one run. Requests are handled concurrently (slow
// calls must not block pings); mu guards the maps and flags.
type server struct {
	opts    Options
	out     *jsonrpc.Writer
	stderr  io.Writer
	exit    chan *ExitError
	wg      sync.WaitGroup
	started time.Time

	mu          sync.Mutex
	hung        bool
	initialized bool   // notifications/initialized received
	version     string // negotiated handshake version, or StatelessVersion
	logLevel    string
	calls       map[string]context.CancelFunc // in-flight requests by raw id
	subs        map[string]bool               // resources/subscribe URIs
	listens     map[string]listen             // open subscriptions/listen by raw id
	values      map[string]string             // set_value
	extra       catalog                       // what CatalogFile lists
	counter     int                           // when no StateFile
	initializes int                           // initialize requests answered: a proxy that takes over a session must not send a second
	f           faultState
}

type listen struct {
	resources map[string]bool
	lists     map[string]bool // the list_changed flags it asked for (toolsListChanged, ...)
}

// request is a decoded client request.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// rpcError is returned by handlers to answer with a JSON-RPC error.
type rpcError struct {
	code int
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

// errNoReply makes a handler send nothing (hang, cancelled, crash).
var errNoReply = errors.New("no reply")

func (s *server) isHung() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hung
}

func (s *server) handleLine(ctx context.Context, line []byte) {
	if len(line) == 0 {
		return
	}
	if s.isHung() {
		return
	}
	m, err := jsonrpc.Peek(line)
	if err != nil {
		code := jsonrpc.CodeInvalidRequest
		if errors.Is(err, jsonrpc.ErrNotJSON) || errors.Is(err, jsonrpc.ErrNotUTF8) {
			code = jsonrpc.CodeParseError
		}
		s.send(jsonrpc.ErrorReply(nil, code, err.Error(), nil))
		return
	}
	switch m.Kind {
	case jsonrpc.KindBatch:
		s.send(jsonrpc.ErrorReply(nil, jsonrpc.CodeInvalidRequest, "batches are not supported", nil))
	case jsonrpc.KindResponse:
		// Only the ask tool sends requests; ignore other responses as the
		// spec allows.
		s.answered(m.ID, line)
	case jsonrpc.KindNotification:
		s.notification(line, m.Method)
	case jsonrpc.KindRequest:
		if m.Method == "tools/call" && s.opts.HangFile != "" && os.Remove(s.opts.HangFile) == nil {
			fmt.Fprintln(s.stderr, "example-server: hang file found; no longer answering")
			s.mu.Lock()
			s.hung = true
			s.mu.Unlock()
			return
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			s.send(jsonrpc.ErrorReply(m.ID, jsonrpc.CodeParseError, err.Error(), nil))
			return
		}
		req.ID = append(json.RawMessage(nil), m.ID...)
		if slices.Contains(s.opts.Faults.Ignore, req.Method) {
			s.event("ignored %s", req.Method)
			return
		}
		if req.Method == "tools/call" && toolName(req.Params) == ToolHang {
			// Deaf from this very message on, before the next line is
			// read: set by the tool's own goroutine, a ping read
			// meanwhile was still answered, and a test saw the hang
			// late (docs/shim.md).
			s.mu.Lock()
			s.hung = true
			s.mu.Unlock()
		}
		s.startRequest(ctx, req)
	}
}

// toolName is a tools/call's params.name ("" when unreadable).
func toolName(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Name
}

func (s *server) notification(line []byte, method string) {
	switch method {
	case "notifications/initialized":
		s.event("initialized")
		s.mu.Lock()
		s.initialized = true
		s.mu.Unlock()
	case "notifications/cancelled":
		var n struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &n) == nil {
			s.mu.Lock()
			if cancel := s.calls[string(n.Params.RequestID)]; cancel != nil {
				cancel()
			}
			s.mu.Unlock()
		}
	}
}

func (s *server) startRequest(ctx context.Context, req request) {
	if req.Method == "server/discover" && s.opts.CrashOnDiscover {
		fmt.Fprintln(s.stderr, "example-server: server/discover is not supported; exiting")
		s.crash(1, "crash on server/discover")
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	key := string(req.ID)
	s.mu.Lock()
	s.calls[key] = cancel
	s.mu.Unlock()
	// Tool calls and listen streams run concurrently (a slow call must not
	// hold up pings); everything else is answered in arrival order, so
	// session state (initialize, setLevel, subscribe) is applied before the
	// next message is read.
	concurrent := req.Method == "tools/call" && !s.opts.Faults.Serial || req.Method == "subscriptions/listen" ||
		req.Method == "resources/list" && s.opts.Faults.CursorDelay > 0 && hasCursor(req.Params)
	s.wg.Add(1)
	run := func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.calls, key)
			s.mu.Unlock()
			cancel()
		}()
		result, err := s.dispatch(rctx, req)
		if rctx.Err() != nil && req.Method != "subscriptions/listen" {
			// Cancelled by the client: the receiver SHOULD NOT respond
			// (cancellation utility, all versions). Cut short because the
			// session ended (stdin closed): the process is going away, as
			// a server's does, without a made-up error for the call; a
			// proxy restarting it re-sends the call if it may.
			return
		}
		var re *rpcError
		switch {
		case errors.Is(err, errNoReply):
		case errors.As(err, &re):
			s.send(jsonrpc.ErrorReply(req.ID, re.code, re.msg, nil))
		case err != nil:
			s.send(jsonrpc.ErrorReply(req.ID, jsonrpc.CodeInternalError, err.Error(), nil))
		default:
			b, merr := json.Marshal(result)
			if merr != nil {
				s.send(jsonrpc.ErrorReply(req.ID, jsonrpc.CodeInternalError, merr.Error(), nil))
				return
			}
			s.send(jsonrpc.ResultReply(req.ID, b))
		}
	}
	if concurrent {
		go run()
	} else {
		run()
	}
}

// send writes one message unless the server is hung.
func (s *server) send(msg []byte) {
	if s.isHung() {
		return
	}
	if err := s.out.WriteLine(msg); err != nil {
		s.opts.Logger.Debug("write failed", "err", err)
	}
}

func (s *server) notify(method string, params any) {
	b, _ := json.Marshal(params)
	s.send(jsonrpc.NewNotification(method, b))
}

func (s *server) junk(text string) {
	if s.isHung() {
		return
	}
	// Through the Writer so it never splits a JSON line.
	s.out.WriteLine([]byte(text))
}

func (s *server) crash(code int, reason string) {
	select {
	case s.exit <- &ExitError{Code: code, Reason: reason}:
	default:
	}
}
