// Package health is mcp-heal's one failure vocabulary. Every failure class
// (what Claude Code or a shim reported), its meaning, whether it leaves a
// server unusable for the session, how a server's health is judged from
// its shims and incidents, and the advice each reader gets live here, so
// that `status`, `doctor`, `heal`, the hooks and the shim's own error
// replies say the same thing about the same failure.
//
// Advice names what its reader can run: inside Claude Code (hooks,
// /mcp-heal) `/mcp-heal heal X`; in a shell `mcp-heal heal X` (Audience).
package health

// Class is what kind of failure an error string or a shim record reports.
type Class string

// The classes. Each comes from a string Claude Code 2.1.328 produces
// (docs/claude-code-behaviour.md, "Error strings") or from mcp-heal's own
// shims (shimerr.go).
const (
	ConnClosed         Class = "connection-closed"
	ClosedBeforeRun    Class = "closed-before-run"
	ClosedBeforeAnswer Class = "closed-before-answer"
	NotConnected       Class = "not-connected"
	Disconnected       Class = "disconnected"
	Cooldown           Class = "cooldown"
	GaveUp             Class = "reconnect-gave-up"
	Refused            Class = "connection-refused"
	Reset              Class = "connection-reset"
	SessionLost        Class = "session-lost"
	IdleTimeout        Class = "idle-timeout"
	RequestTimeout     Class = "request-timeout"
	StillConnecting    Class = "still-connecting"
	ShimRestarted      Class = "shim-restarted"
	ShimFailed         Class = "shim-failed"
	CannotStart        Class = "cannot-start"
	ShimUnreachable    Class = "shim-unreachable"
	OK                 Class = "ok"
)

// Info is what a class means.
type Info struct {
	// Meaning is one line for people reading the code, the docs and
	// `status --json`.
	Meaning string
	// Dead: Claude Code does not use the server again in this session
	// until the user runs `/mcp reconnect <name>` (it never retries by
	// itself; docs/claude-code-behaviour.md, "What Claude Code does on
	// its own"). A wrapped server's shim keeps Claude Code's connection,
	// so no shim class is dead.
	Dead bool
	// MayHaveRun: the failed call may have had an effect on the server.
	MayHaveRun bool
	// Shim: the class is reported by an mcp-heal shim (its error reply
	// or its record), not by Claude Code.
	Shim bool
}

// table is every class in its stable order with what it means: a new class
// is its constant above and one row here.
var table = []struct {
	Class Class
	Info  Info
}{
	{ConnClosed, Info{Meaning: "the stdio server died during the call", MayHaveRun: true}},
	{ClosedBeforeRun, Info{Meaning: "the connection closed before the call reached the server"}},
	{ClosedBeforeAnswer, Info{Meaning: "the connection closed before the call was answered", MayHaveRun: true}},
	{NotConnected, Info{Meaning: "Claude Code's respawn of the stdio server failed; it never retries", Dead: true}},
	{Disconnected, Info{Meaning: "Claude Code dropped the server (interactive session) and refuses its tools", Dead: true}},
	{Cooldown, Info{Meaning: "the HTTP server is in Claude Code's reconnect cool-down"}},
	{GaveUp, Info{Meaning: "one HTTP reconnect attempt failed; Claude Code keeps retrying in the background"}},
	{Refused, Info{Meaning: "the HTTP server refused the connection"}},
	{Reset, Info{Meaning: "the HTTP connection broke during the call", MayHaveRun: true}},
	{SessionLost, Info{Meaning: "the HTTP server restarted and rejected Claude Code's old session", Dead: true}},
	{IdleTimeout, Info{Meaning: "the server sent no response or progress: hung", MayHaveRun: true}},
	{RequestTimeout, Info{Meaning: "the request timed out (MCP error -32001)", MayHaveRun: true}},
	{StillConnecting, Info{Meaning: "the server is not up yet"}},
	{ShimRestarted, Info{Meaning: "the server died during the call and its shim restarted it", MayHaveRun: true, Shim: true}},
	{ShimFailed, Info{Meaning: "crash loop: the shim keeps restarting the server and answers calls with an error", Shim: true}},
	{CannotStart, Info{Meaning: "the server's command is not found or not executable: the shim waits for it to be fixed", Shim: true}},
	{ShimUnreachable, Info{Meaning: "the remote server stayed down past the shim's deadline; the call was not sent", Shim: true}},
	{OK, Info{Meaning: "the server answered a call again"}},
}

var classes = func() map[Class]Info {
	m := make(map[Class]Info, len(table))
	for _, r := range table {
		m[r.Class] = r.Info
	}
	return m
}()

// Classes lists every class, in a stable order.
func Classes() []Class {
	out := make([]Class, len(table))
	for i, r := range table {
		out[i] = r.Class
	}
	return out
}

// Info says what c means; the zero Info for a class it does not know.
func (c Class) Info() Info { return classes[c] }

// Dead says whether, after c, Claude Code will not use the server again in
// this session unless the user reconnects it.
func (c Class) Dead() bool { return classes[c].Dead }

// NeedsReconnect is Dead for a class stored as a string (incidents).
func NeedsReconnect(c string) bool { return Class(c).Dead() }
