// Package upstream defines what the shim talks to: something that carries
// JSON-RPC lines, can die, and can be started again. A child process
// (internal/proc via internal/shim) and a remote session (internal/bridge)
// both implement it, so the shim's recovery (queue, handshake replay, state
// replay, retry policy) is written once.
package upstream

import (
	"context"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Dialer starts a fresh connection: spawns the child process, or opens a new
// remote session (for a remote, Dial does not send initialize: the shim
// replays the client's own handshake through Send).
type Dialer interface {
	// Dial starts a new connection. An error means the start itself failed
	// (command not found, connection refused); the shim backs off and
	// dials again.
	Dial(ctx context.Context) (Conn, error)
	// Target describes what is dialled (command line or URL) with secrets
	// removed, for logs and the state record.
	Target() string
	// Mode is state.ModeStdio or state.ModeRemote.
	Mode() string
}

// Conn is one live connection. Send may be called from one goroutine at a
// time (the shim's writer); Recv's channel is read by one goroutine.
type Conn interface {
	// Send delivers one JSON-RPC message (no trailing newline). The slice
	// is not retained after Send returns. An error means the connection is
	// dead or dying; Done will close.
	Send(msg []byte) error
	// Recv delivers each message from the server, in order, as complete
	// JSON-RPC lines (no newline). It is closed after the connection dies,
	// once every message received before that was delivered.
	Recv() <-chan []byte
	// Done is closed when the connection is dead.
	Done() <-chan struct{}
	// Exit says why the connection ended; valid after Done is closed.
	Exit() Exit
	// PID is the child's pid (0 for a remote).
	PID() int
	// Close stops the connection (the stdin-close, SIGTERM, SIGKILL ladder
	// for a child; DELETE for a remote session) and waits for it. It is
	// safe to call more than once and after Done.
	Close() error
}

// Exit is how a connection ended.
type Exit struct {
	state.Exit
	// Undelivered holds the raw ids of requests that Send accepted but the
	// server is known not to have processed (a remote session that answered
	// 404/400 "session not found" to them, or connection refused before the
	// request was sent). The shim may re-send them on the next connection
	// whatever the retry policy says.
	Undelivered [][]byte
	// StderrTail is the last lines the child wrote to stderr (redacted).
	StderrTail []string
	// Killed: the connection's own side ended it (Kill with a reason: a
	// hang, a closed stdout), so a signal in Exit is not someone else's.
	Killed bool
}

// Handler receives a connection's messages in the goroutine that read
// them, when the connection can deliver so (proc.Process.Serve), instead
// of over Recv: a relay then routes a message with no hand-off between
// goroutines, as a byte relay would move it.
//
// There are two delivery paths, and only a child process the shim runs
// itself (internal/proc) takes this one. The others need a message whole
// before they can give it to the shim, so they deliver over Recv:
//   - a kept server's connection (internal/keep) gives each response the
//     client's own id back and keeps an initialize result for the next
//     client; neither can be done before a line's end (the TypeScript
//     SDK writes the id last);
//   - a remote session (internal/bridge) gets messages as HTTP bodies
//     and server-sent events: an event counts only once it is whole (one
//     cut off by the stream's end is discarded), and a body becomes one
//     stdio line only once all of it is read (JSON allows newlines
//     between tokens).
//
// What Recv costs: a long answer is held whole, so the client gets its
// first byte after the server wrote its last (a 16 MiB answer took 3.5×
// the server's own time through a relay that waits for the end, 1.4×
// through one that passes it on: issue 25, shim/stream.go); the shim
// holds the line (up to its --max-message ceiling); and each message is
// handed from the reading goroutine to the shim's pump. The shim's
// TestLongAnswerPassedOnAsItComes shows this path passing a long answer
// on, TestLongAnswerHeldWholeWhenKept the kept path holding it whole.
type Handler interface {
	// Line is one message line, the handler's to keep; more: the next
	// line is already read and follows at once.
	Line(line []byte, more bool)
	// Part is offered each part of a long line as it comes, before that
	// line is whole (jsonrpc.Reader.Parts: first and last mark its first
	// part and its end, a nil last part a line dropped over the ceiling).
	// What it returns for the first part says whether the whole line
	// comes to Line too, once complete (keep).
	Part(part []byte, first, last bool) (keep bool)
}
