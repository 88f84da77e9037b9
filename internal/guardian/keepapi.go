package guardian

import (
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
