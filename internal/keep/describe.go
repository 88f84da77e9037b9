package keep

import (
	"fmt"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Describe is what status says about a kept server's record: attached, or
// detached with how long it has been idle and when it will be stopped.
// Empty for a server that is not kept.
func Describe(r *state.Record, now time.Time) string {
	switch {
	case !r.Kept:
		return ""
	case r.Attached:
		return fmt.Sprintf("kept (server pid %d outlives this session's client; attached)", r.ChildPID)
	case r.DetachedSince != nil && r.Expires != nil:
		return fmt.Sprintf("kept, detached: server pid %d idle for %s, stopped in %s unless a session re-attaches",
			r.ChildPID, now.Sub(*r.DetachedSince).Round(time.Second), max(r.Expires.Sub(now), 0).Round(time.Second))
	}
	return fmt.Sprintf("kept (server pid %d)", r.ChildPID)
}
