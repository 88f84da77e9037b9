package hook

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// Main handles one hook event as `mcp-heal hook EVENT` does, called from
// the command's main like every other subcommand: the payload from stdin,
// the reply (or nothing) to stdout. It returns the exit code, always 0: a
// hook never fails, whatever goes wrong is logged (hook.log). PreToolUse's
// healthy path (an empty attention directory) never gets here: the
// plugin's launcher answers it with shell builtins (plugin/mcp-heal).
func Main(ctx context.Context, event string, stdin io.Reader, stdout io.Writer, getenv func(string) string) int {
	log := NewLogger()
	// Handle recovers its own panics; this catches one anywhere else on
	// the hook's path (reading stdin, writing the reply). Go exits 2 on
	// an unrecovered panic, the one status that blocks a PreToolUse call.
	defer func() {
		if p := recover(); p != nil {
			log.Error("hook panicked", "event", event, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	payload, err := ReadPayload(stdin)
	if err != nil {
		log.Warn("reading hook stdin", "event", event, "err", err)
		return 0
	}
	if reply := New(getenv, log).Handle(ctx, event, payload); reply != nil {
		if _, err := stdout.Write(reply); err != nil {
			log.Warn("writing hook reply", "err", err)
		}
	}
	return 0
}
