package hook

import (
	"syscall"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// kill nudges a shim to restart its server (SIGHUP: the shim's heal event,
// state.NudgeShim); other signals are ErrUnsupported, so a hook does not
// stop an unwrapped server's tree on Windows.
func kill(pid int, sig syscall.Signal) error { return state.NudgeShim(pid, sig) }
