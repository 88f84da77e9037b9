package shim

import "github.com/mcp-heal/mcp-heal/internal/upstream"

// detacher is implemented by a kept server's connection (internal/keep):
// when the shim stops (client EOF, SIGTERM), the server is left running
// under its guardian for the next client instead of stopped.
type detacher interface{ LeaveRunning() }

// closeOrDetach ends the shim's use of c for good: a kept server is
// detached, anything else stopped with the ladder.
func closeOrDetach(c upstream.Conn) {
	if d, ok := c.(detacher); ok {
		d.LeaveRunning()
		return
	}
	c.Close()
}
