package doctor

import (
	"syscall"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// kill nudges a shim to restart its server (SIGHUP: the shim's heal event,
// state.NudgeShim); Windows has no other signal to send.
func kill(pid int, sig syscall.Signal) error { return state.NudgeShim(pid, sig) }
