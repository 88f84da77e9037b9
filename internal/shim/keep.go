package shim

import (
	"github.com/mcp-heal/mcp-heal/internal/proc"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// detacher is implemented by a kept server's connection (internal/keep):
// when the shim stops (client EOF, SIGTERM), the server is left running
// under its guardian for the next client instead of stopped.
type detacher interface{ Detach() }

// closeOrDetach ends the shim's use of c for good: a kept server is
// detached, anything else stopped with the ladder. A plain child
// (*proc.Process) has a Detach too, for keep's connection to call once it
// has let its guardian go; on its own it would leave a server that ignores
// stdin EOF running and the shim waiting for it forever, so it is closed.
func closeOrDetach(c upstream.Conn) {
	if _, plain := c.(*proc.Process); !plain {
		if d, ok := c.(detacher); ok {
			d.Detach()
			return
		}
	}
	c.Close()
}
