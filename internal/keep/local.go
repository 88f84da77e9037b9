package keep

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/proc"
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
	d.Event = func(ev string, kv ...any) { LogEvent(w, d.Name, ev, append(kv, "shim_pid", os.Getpid())...) }
}
