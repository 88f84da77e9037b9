package keep

import (
	"log/slog"
	"os"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Serve is the kept guardian process (`mcp-heal guardian --keep`): it
// serves the listener inherited as fd 3 and keeps a state record while no
// shim is attached, so that `status` shows the kept server, `stop` finds
// it, and a changed entry of the same slot replaces it.
func Serve(name, identity, slot string, window time.Duration, log *slog.Logger) error {
	ln, err := guardian.ListenerFromFD(3)
	if err != nil {
		return err
	}
	socket := ln.Addr().String()
	started := time.Now().UTC()
	lifecycle, _ := state.OpenLog(name)
	if lifecycle != nil {
		defer lifecycle.Close()
	}
	return guardian.ServeKept(ln, guardian.KeepOptions{
		Keep: window, Identity: identity, Log: log, Hooks: newKeeper().hooks(),
		OnChange: func(info guardian.KeptInfo) {
			if info.Stopped {
				_ = state.Remove(os.Getpid())
				event(lifecycle, name, "keep-stopped", info.LastExitReason)
				return
			}
			if info.Attached || info.ServerPID == 0 {
				_ = state.Remove(os.Getpid())
				return
			}
			r := &state.Record{
				Server: name, ShimPID: os.Getpid(), Mode: state.ModeStdio, State: state.Running,
				Target: target(info.Argv), ChildPID: info.ServerPID, ChildStarted: info.ServerStarted.UTC(),
				Started: started, Kept: true, KeepSocket: socket, KeepSlot: slot,
			}
			ds, ex := info.DetachedSince.UTC(), info.Expires.UTC()
			r.DetachedSince, r.Expires = &ds, &ex
			if err := state.Write(r); err != nil {
				log.Warn("write the kept server's state record", "err", err)
			}
			event(lifecycle, name, "keep-detached", "expires "+ex.Format(time.RFC3339))
		},
	})
}

func target(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	return (&proc.Dialer{Config: proc.Config{Path: argv[0], Args: argv[1:]}}).Target()
}

// event appends one lifecycle line, in the shim's format.
func event(f *state.LogFile, server, ev, detail string) {
	if f == nil {
		return
	}
	_ = state.WriteEvent(f, server, ev, "detail", detail, "guardian_pid", os.Getpid())
}
