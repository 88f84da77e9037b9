package fakeshim

import (
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Records returns a maker of the records of a session's shims, as they
// stand at now: rec(name, st, f) is server name's record in state st,
// its shim and child started an hour ago, changed by f when f is not nil.
func Records(now time.Time) (rec func(name, st string, f func(r *state.Record)) *state.Record) {
	return func(name, st string, f func(r *state.Record)) *state.Record {
		r := &state.Record{Server: name, State: st, Started: now.Add(-time.Hour), ChildStarted: now.Add(-time.Hour), Updated: now}
		if f != nil {
			f(r)
		}
		return r
	}
}
