// Package shim is the self-healing supervisor between an MCP client (Claude
// Code, on our stdin/stdout) and an upstream (a child process or a remote
// session, behind upstream.Dialer).
//
// It forwards newline-delimited JSON-RPC both ways byte for byte, and when
// the upstream dies it starts a new one, replays the client's own handshake
// and session state, re-sends the requests that are safe to re-send, answers
// the others with one -32603 error, and queues what arrives meanwhile, so
// the client sees at most an error for a call that may have had effects,
// never a dead connection.
//
// Goroutines, each owned by Run and stopped before it returns:
//   - the client reader (stdin -> upstream; stopped by client EOF; when Run
//     returns because ctx was cancelled it may still be blocked in Read of a
//     reader that cannot be interrupted, such as os.Stdin: the process is
//     about to exit then);
//   - the supervisor (dial, replay, wait for death, back off), which owns
//     the per-connection pump (upstream -> stdout);
//   - the janitor (liveness, idle pings, queue time-outs);
//   - the state-record writer.
//
// Locking: mu guards all session state and is never held across I/O.
// sendMu serialises Sends to the upstream (upstream.Conn allows one sender
// at a time) and keeps client order when the queue is released.
package shim

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/clock"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
	"github.com/mcp-heal/mcp-heal/internal/liveness"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// Options configure a Shim. Zero durations take the defaults noted.
type Options struct {
	// Name is the server's name as Claude Code knows it.
	Name   string
	Dialer upstream.Dialer
	// Stdin and Stdout are the client side.
	Stdin  io.Reader
	Stdout io.Writer
	Log    *slog.Logger

	// NoRetry turns off re-sending tools/call requests on the strength of
	// the tool's readOnlyHint/idempotentHint annotations.
	NoRetry bool
	// HangAfter is the user's deadline (--hang-after): a call outstanding
	// this long with no sign of life from the server, and deaf to a ping
	// for PingTimeout, gets the server killed. 0 (the default, what `wrap`
	// writes): none; silence alone never kills a server (hang.go).
	HangAfter time.Duration
	// PingTimeout: a ping unanswered this long is deafness: the server is
	// not answering (default DefaultPingTimeout).
	PingTimeout time.Duration
	// KillOnCancel is the user's consent (--kill-on-cancel) to kill a
	// server deaf for PingTimeout after the client cancelled a call.
	// Without it (the default) such a server is only not answering since
	// the cancel, and left running (hang.go).
	KillOnCancel bool
	// Look: a call this long with no sign of life starts a ping that only
	// tells busy from deaf (default liveness.DefaultLook).
	Look time.Duration
	// PingInterval: when > 0, probe an idle server this often, and kill it
	// when deaf.
	PingInterval time.Duration
	// MaxFailures quick failures in a row mark the server failed (default 5).
	MaxFailures int
	// BackoffMin and BackoffMax shape the delay between respawns of a
	// crash-looping server (defaults 250ms and 30s).
	BackoffMin, BackoffMax time.Duration
	// StableAfter: a run that lasts this long resets the failure count
	// (default 10s), as does a shorter one that proved healthy
	// (supervise.go: provedHealthy).
	StableAfter time.Duration
	// ResetOnUp: a connection whose handshake replay succeeded resets the
	// failure count. Set for remote servers: a session that came up proves
	// the server healthy, and each later session loss (a server restart)
	// must be healed at once, not after a growing backoff.
	ResetOnUp bool
	// QueueTimeout: when > 0, a request queued while the server is down is
	// answered with an error after this long.
	QueueTimeout time.Duration
	// ReplayTimeout bounds each replayed handshake/state request (default
	// 30s).
	ReplayTimeout time.Duration

	// MaxMessage is the ceiling on one message from the client (default
	// jsonrpc.DefaultMaxMessage), the one the server's messages get
	// (--max-message): a longer line is discarded as it streams, never
	// held whole, and a request among them is answered with an error.
	MaxMessage int

	// Clock times the supervisor's decisions (backoff, hang and idle
	// probes, queue time-outs); nil is the wall clock. Tests inject a
	// clock.Fake so that they need not sleep through those delays.
	Clock clock.Clock

	// Lifecycle, when non-nil, receives JSON lines of lifecycle events.
	Lifecycle io.Writer
	// Traffic, when non-nil, receives every message both ways (redacted).
	Traffic io.Writer
	// Record, when true, keeps a state record under the XDG state dir.
	Record bool
	// Session is CLAUDE_CODE_SESSION_ID; ClaudePID the shim's parent.
	Session   string
	ClaudePID int
}

// Shim supervises one upstream for one client. Create it with New and call
// Run once.
type Shim struct {
	o      Options
	clk    clock.Clock
	log    *slog.Logger
	out    *outWriter
	in     *jsonrpc.Reader
	pid    int
	start  time.Time
	mode   string
	target string

	sendMu    sync.Mutex  // serialises upstream Sends; taken before mu
	unflushed laterSender // guarded by sendMu: holds messages not yet written

	mu        sync.Mutex
	run       *run              // the current run of the server (run.go)
	phase     string            // the supervisor's state: see phase.go
	inflight  map[string]*entry // by raw id: client requests and injected ones
	queue     []qitem
	seq       uint64
	srvReqs   map[string]*srvReq // server->client requests, by the id the client sees
	nextSrvID int64
	nextInjID int64
	sess      session
	lastExit  *upstream.Exit
	stderr    []string
	lastErr   string
	restarts  int
	retried   int
	failedN   int
	dialFails int
	cantStart bool   // the last start failed because the command cannot start (cannotstart.go)
	dialSig   string // the command's file as the last Dial found it; the supervisor's alone
	permanent bool   // the last dial failed for a reason retrying will not fix soon
	downSince time.Time
	liveCfg   liveness.Config // the liveness rules' settings (run.live: hang.go)

	closers sync.WaitGroup // upstreams being closed by kill; Run waits

	note restartNote // the restart the model has not been told of yet (note.go)

	lim pumpLimits // see pump.go

	restartCh  chan struct{}
	wakeCh     chan struct{}          // a request for an idle server (idle.go)
	idleExits  int                    // guarded by mu: runs ended by the server's choice
	restartWhy atomic.Pointer[string] // the reason of the last Restart

	logMu   sync.Mutex
	records chan *state.Record
}

// entry is one request on its way: the client's (until answered) or one
// the shim injected (replayed handshake, probes).
type entry struct {
	id        []byte // raw id as the client sent it
	line      []byte // the request as received, for re-sending
	method    string
	tool      string // tools/call params.name
	cursor    bool   // a pagination continuation
	seq       uint64 // arrival order
	run       *run   // the run it was sent on; nil while queued
	at        time.Time
	sentAt    time.Time
	retries   int
	cancelled bool
	ignored   bool // the server answered later requests and left this one (hang.go: markIgnored)
	undeliv   bool // Send failed: the server never got it

	injected bool
	waiter   chan []byte // injected: gets the response; closed on death

	cut   int64 // bytes of its answer passed on before the server ended (stream.go)
	recut bool  // re-sent once after a cut answer: a second cut is told, not re-sent
	// task is the taskId it names when that task belonged to a server
	// process that ended (tasks.go); its error answer is reworded.
	task string
}

// qitem is a queued client message: a request (e) or a notification/other
// line to send in order.
type qitem struct {
	e    *entry
	line []byte
}

// srvReq is a server->client request the client has not answered.
type srvReq struct {
	run    *run
	orig   []byte // the server's own id
	method string
}

// New returns a Shim; o.Dialer, o.Stdin and o.Stdout are required.
func New(o Options) *Shim {
	if o.MaxFailures <= 0 {
		o.MaxFailures = 5
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 250 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 30 * time.Second
	}
	if o.BackoffMin > o.BackoffMax {
		o.BackoffMin = o.BackoffMax
	}
	if o.StableAfter <= 0 {
		o.StableAfter = 10 * time.Second
	}
	if o.ReplayTimeout <= 0 {
		o.ReplayTimeout = 30 * time.Second
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = jsonrpc.DefaultMaxMessage
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clk := clock.Or(o.Clock)
	live := liveness.New(liveConfig(o), clk.Now())
	return &Shim{
		run:       &run{down: true, live: *live},
		liveCfg:   live.Config(),
		o:         o,
		clk:       clk,
		log:       log,
		out:       newOutWriter(o.Stdout),
		in:        jsonrpc.NewReaderMax(o.Stdin, o.MaxMessage),
		pid:       os.Getpid(),
		start:     time.Now(),
		mode:      o.Dialer.Mode(),
		target:    o.Dialer.Target(),
		phase:     state.Starting,
		inflight:  make(map[string]*entry),
		srvReqs:   make(map[string]*srvReq),
		nextSrvID: 1,
		sess:      newSession(),
		downSince: clk.Now(),
		restartCh: make(chan struct{}, 1),
		wakeCh:    make(chan struct{}, 1),
		records:   make(chan *state.Record, 1),
	}
}

// Restart asks for the upstream to be restarted on purpose (SIGHUP): the
// current child is stopped with the ladder and a new one started at once,
// even from the failed state. Safe from any goroutine.
func (s *Shim) Restart(reason string) {
	s.restartWhy.Store(&reason)
	select {
	case s.restartCh <- struct{}{}:
	default:
	}
}

func (s *Shim) restartReason() string {
	if p := s.restartWhy.Load(); p != nil {
		return *p
	}
	return ""
}

// Run serves the client until its stdin ends or ctx is cancelled, then
// stops the upstream (no respawn) and returns. A child failing is never a
// reason for Run to return.
func (s *Shim) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wg sync.WaitGroup
	recDone := make(chan struct{})
	if s.o.Record {
		go func() { s.writeRecords(); close(recDone) }()
	} else {
		close(recDone)
	}
	s.event("shim-start", "target", s.target, "mode", s.mode, "claude_pid", s.o.ClaudePID, "session", s.o.Session)
	s.record()

	supDone := make(chan struct{})
	go func() { s.supervise(ctx); close(supDone) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.janitor(ctx) }()

	clientDone := make(chan error, 1)
	go func() { clientDone <- s.readClient() }()

	select {
	case err := <-clientDone:
		if err != nil {
			s.log.Warn("read from client", "err", err)
		}
		s.event("client-eof")
	case <-ctx.Done():
	}
	s.stop()
	s.record()
	cancel()
	<-supDone
	wg.Wait()
	s.closers.Wait()
	close(s.records)
	<-recDone
	if s.o.Record {
		if err := state.Remove(s.pid); err != nil {
			s.log.Warn("remove state record", "err", err)
		}
		s.forgetNoteClaim()
	}
	s.event("shim-exit", "uptime_ms", time.Since(s.start).Milliseconds())
	return nil
}

// writeOut sends one line to the client.
func (s *Shim) writeOut(line []byte) { s.writeOutMore(line, false) }

// writeOutMore sends one line to the client, leaving it buffered when more
// lines follow at once.
func (s *Shim) writeOutMore(line []byte, more bool) {
	s.traffic("s2c", line)
	if err := s.out.write(line, !more); err != nil {
		s.log.Debug("write to client", "err", err)
	}
}
