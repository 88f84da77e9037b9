package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	// Its initialiser answers PreToolUse's healthy path, before most
	// others run.
	_ "github.com/mcp-heal/mcp-heal/internal/hook/healthy"
)

// The hook's process starts here, in this package's initialiser, not in
// main (issue 25). Go initialises every package linked into a binary
// before main, and the one binary also holds the shim's bridge: net,
// crypto/tls and net/http, about a hundred initialisers that a hook never
// uses, which made `mcp-heal hook PreToolUse` 1.75-1.95x a minimal Go
// program. A package is initialised after everything it imports, and
// this one imports none of those (TestHookImportsNoNetwork keeps it so),
// so its initialiser runs first and the process exits before they do.
// Anything else (`hook --help`, a flag) goes on to main as before. Before
// it, internal/hook/healthy answers PreToolUse's healthy path (an empty
// attention directory) right after os is initialised: this initialiser
// still ran after 78 others.
func init() {
	if len(os.Args) == 3 && os.Args[1] == "hook" && os.Args[2] != "" && os.Args[2][0] != '-' {
		os.Exit(Main(context.Background(), os.Args[2], os.Stdin, os.Stdout, os.Getenv))
	}
}

// Main handles one hook event as `mcp-heal hook EVENT` does: the payload
// from stdin, the reply (or nothing) to stdout. It returns the exit code,
// always 0: a hook never fails, whatever goes wrong is logged (hook.log).
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
