package guardian

import (
	"encoding/json"
	"errors"
	"log/slog"
	"time"
)

// ErrBusy: another shim is attached to the kept server.
var ErrBusy = errors.New("another client is attached to the kept server")

// KeepOptions configure a kept guardian.
type KeepOptions struct {
	// Keep is how long the server runs on with no shim attached.
	Keep time.Duration
	// Identity is the hash of name, command, args, env and cwd; an attach
	// for another identity is refused.
	Identity string
	Log      *slog.Logger
	// OnChange, when set, is called (from any goroutine, serialised) when
	// the kept server's state changes, to keep its state record.
	OnChange func(KeptInfo)
	// Hooks is the session keeper (internal/keep): what the bytes mean.
	Hooks KeepHooks
}

// KeepHooks are the session keeper's callbacks into a kept guardian. The
// guardian moves descriptors and bytes: it hands the server's stdio to
// each shim that attaches, drains the server's output while none is, and
// ends a line a dying shim left unfinished. What the MCP session is, and
// what the server must be told when its client goes away, is the keeper's
// (internal/keep), so the guardian never parses JSON-RPC. A hook may be
// called with the guardian's lock held and must not call back into it;
// any hook may be nil.
type KeepHooks struct {
	// Started: the shim started a (new) server; the old one's session is
	// void.
	Started func()
	// Note: the attached shim told the keeper about the session (a
	// control message with op "note"); line is that message.
	Note func(line []byte)
	// Attach returns the session to hand to the shim now attaching (any
	// JSON value, passed as is) and undo, called when it never reached
	// the shim.
	Attach func() (session json.RawMessage, undo func())
	// Detach: the attached shim went away; the lines returned are written
	// to the server (each without its newline).
	Detach func() [][]byte
	// Drained: the server wrote line while no shim was attached; what is
	// returned (nil: nothing) is written back to the server. Called from
	// the drain goroutine, never with the guardian's lock held.
	Drained func(line []byte) []byte
}

// KeptInfo is what a kept guardian says about itself.
type KeptInfo struct {
	ServerPID      int       // 0: no server runs
	ServerStarted  time.Time // when it started
	Attached       bool
	DetachedSince  time.Time // zero while attached
	Expires        time.Time // zero while attached
	Stopped        bool      // the guardian is exiting
	Argv           []string  // the server's command line (not redacted)
	LastExitReason string
}

// Attached is what a shim gets when it attaches to a kept guardian
// (on Windows, where nothing is kept, never).
type Attached struct {
	Guardian *Guardian
	Epoch    int
	// Session is the keeper's session (KeepHooks.Attach), as the
	// guardian handed it over.
	Session json.RawMessage
	// Child is the running server (nil: none runs; Run starts one).
	Child *Child
	// Prefix is what the guardian read of the server's stdout after the
	// last complete line: the start of the next line.
	Prefix []byte
}
