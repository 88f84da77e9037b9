package example

import (
	"fmt"
	"log/slog"
	"time"
)

// Options configure one run of the server.
type Options struct {
	// Era is EraBoth (default), EraHandshake or EraStateless.
	Era string
	// Name is the serverInfo name (default "mcp-heal-example").
	Name string
	// StateFile holds counter_increment's counter as a decimal integer, so
	// a test can tell whether a call ran twice. Empty keeps it in memory.
	StateFile string
	// CallLog, when set, gets one line per tools/call the server executed:
	// `<tool> <arguments JSON>`.
	CallLog string
	// FailFile counts the starts across processes (every start, whenever
	// it is set), and the first FailStarts of them fail with a message on
	// stderr and exit code 1.
	FailStarts int
	FailFile   string
	// JunkStdout writes a non-JSON line to stdout at start and before every
	// tools/call result (a server that logs to the wrong stream).
	JunkStdout bool
	// StartDelay sleeps before reading stdin (a slow cold start).
	StartDelay time.Duration
	// CatalogFile lists extra tools, prompts and resources, one `tool
	// NAME`, `prompt NAME` or `resource URI` a line. The server re-reads it
	// every 50 ms and announces each list that changed
	// (notifications/*/list_changed): a catalog that changes from outside
	// the session, as tests of list_changed need.
	CatalogFile string
	// CrashOnDiscover exits (code 1) when it receives server/discover, like
	// a server that dies on a method it does not know.
	CrashOnDiscover bool
	// HangFile, when set: a tools/call that arrives while this file exists
	// removes it and hangs the server (as the hang tool does) with that
	// call outstanding. A test creates the file to make a running server
	// deaf without calling a tool that is not read-only; removing it makes
	// the fault happen once, so the server started in its place works.
	HangFile string
	// Logger receives the server's own diagnostics; nil discards them.
	Logger *slog.Logger
	// Faults are the misbehaviours a proxy's tests need beyond the flags
	// above; `mcp-heal example-server` has no flags for them.
	Faults Faults
}

// ExitError asks the caller to end the process with Code: the crash tool,
// --crash-on-discover and simulated start failures return it. Run returns it
// at once, without waiting for other calls: the point is to die mid-call.
type ExitError struct {
	Code   int
	Reason string
}

func (e *ExitError) Error() string { return fmt.Sprintf("%s (exit %d)", e.Reason, e.Code) }
