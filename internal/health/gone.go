package health

import (
	"fmt"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// ShimExited is the health `status` shows for a server whose shim died
// (killed or crashed: it left its record, state.Gone) in a session that
// still runs, with no shim of it running since: Claude Code lost the
// server with the shim and does not start it again by itself.
const ShimExited = "shim exited"

// ShimGone says when g's shim died and what is known of how: it left its
// record, so it was killed (SIGKILL, the OOM killer) or crashed; its exit
// status went to Claude Code, not to mcp-heal.
func ShimGone(g *state.Gone) string {
	found := g.FoundGone.Local().Format("15:04:05")
	if g.FoundGone.Sub(g.Updated) > 5*time.Second {
		return fmt.Sprintf("its shim exited between %s and %s (killed or crashed)", g.Updated.Local().Format("15:04:05"), found)
	}
	return fmt.Sprintf("its shim exited at %s (killed or crashed)", found)
}

// MonitorShimGone is the monitor's line for a server whose shim died:
// what to run first, then why.
func MonitorShimGone(g *state.Gone) string {
	return fmt.Sprintf("mcp-heal: run %s: %s. Claude Code lost MCP server %s with it and does not start it again by itself; its tools are unavailable until then: ask the user to run it.",
		Claude.Reconnect(g.Server), ShimGone(g), quote(g.Server))
}
