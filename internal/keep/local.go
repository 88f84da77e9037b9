package keep

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// LocalDialer is the upstream of `mcp-heal shim -- CMD`: the kept server
// (a Dialer) when window > 0, else a plain proc.Dialer. A server that cannot
// be kept (no binary to run its guardian, no socket directory) runs unkept,
// with a warning on log, rather than not at all.
func LocalDialer(cfg proc.Config, name string, window time.Duration, envNames []string, log *slog.Logger) upstream.Dialer {
	if window > 0 {
		kd, err := NewDialer(cfg, name, window, envNames, log)
		if err == nil {
			return kd
		}
		log.Warn("cannot keep the server: it runs unkept", "err", err)
	}
	return &proc.Dialer{Config: cfg}
}

// LogEventsTo writes the dialer's keep events to w, the server's lifecycle
// log, in the shim's format, with this shim's pid. Call it before the first
// Dial.
func (d *Dialer) LogEventsTo(w io.Writer) {
	d.Event = func(ev string, kv ...any) {
		_ = state.WriteEvent(w, d.Name, ev, append(kv, "shim_pid", os.Getpid())...)
	}
}

// StopNamed stops every kept server named name (see Stop), in the order of
// their sockets, calls stopped with the pid of each, and returns how many
// it stopped; 0 when none is running.
func StopNamed(name string, stopped func(pid int)) (int, error) {
	socks, err := Kept(name)
	if err != nil {
		return 0, err
	}
	paths := slices.Sorted(maps.Keys(socks))
	for i, p := range paths {
		if err := Stop(p); err != nil {
			return i, fmt.Errorf("stop the kept server %s (pid %d): %w", name, socks[p], err)
		}
		stopped(socks[p])
	}
	return len(paths), nil
}
