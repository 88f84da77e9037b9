package keep

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

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
