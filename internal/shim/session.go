package shim

import (
	"sort"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsonrpc"
)

// Eras of the protocol (see the 2026-07-28 specification's
// "server/discover" and the handshake of 2024-11-05..2025-11-25).
const (
	EraStateless = "stateless"
	EraHandshake = "handshake"
)

const stateless = "2026-07-28"

// session is what the shim remembers of the client's session so that a new
// upstream can be brought to the same point. Guarded by Shim.mu.
type session struct {
	era     string
	version string // protocol version agreed by the first handshake
	// initLine is the client's own initialize request, replayed (with an
	// injected id) on every respawn in the handshake era.
	initLine []byte
	// initializedLine is the client's notifications/initialized, when seen.
	initializedLine []byte
	// discoverLine is the client's server/discover request; in the
	// stateless era it doubles as the liveness probe (that era has no ping).
	discoverLine []byte
	// replayedInit is set once a replay sent notifications/initialized, so
	// that a late one from the client is not sent a second time.
	replayedInit bool
	setLevel     []byte          // last successful logging/setLevel request
	subs         map[string]bool // resources/subscribe URIs in effect
	tools        map[string]toolPolicy
	// toolsCap and toolsListChanged are what the first InitializeResult
	// declared; toolsSeen is the last complete (unpaginated) tools/list
	// result the client got, to tell whether a restarted server changed
	// its catalog.
	toolsCap, toolsListChanged bool
	toolsSeen                  []byte
	// goneTasks are the task ids handed out by runs that ended, with why
	// they ended (tasks.go); at most maxTasks.
	goneTasks map[string]health.Cause
}

type toolPolicy struct{ readOnly, idempotent bool }

func newSession() session {
	return session{subs: make(map[string]bool), tools: make(map[string]toolPolicy)}
}

// noteRequest records what a client request changes in the session before
// it is sent.
func (ss *session) noteRequest(e *entry) {
	switch e.method {
	case "resources/unsubscribe":
		delete(ss.subs, gjson.GetBytes(e.line, "params.uri").String())
	}
}

// noteResponse records what a successful (or failed) response tells about
// the session; it reports whether the negotiated era changed.
func (ss *session) noteResponse(e *entry, line []byte, m jsonrpc.Msg) bool {
	if m.IsError {
		return false
	}
	era := ss.era
	switch e.method {
	case "server/discover":
		if ss.era == "" {
			ss.era = EraStateless
			ss.version = gjson.GetBytes(e.line, `params._meta.io\.modelcontextprotocol/protocolVersion`).String()
			if ss.version == "" {
				ss.version = stateless
			}
		}
		ss.discoverLine = e.line
	case "initialize":
		if ss.initLine == nil {
			ss.era = EraHandshake
			ss.version = gjson.GetBytes(line, "result.protocolVersion").String()
			ss.initLine = e.line
			tc := gjson.GetBytes(line, "result.capabilities.tools")
			ss.toolsCap = tc.Exists()
			ss.toolsListChanged = tc.Get("listChanged").Type == gjson.True
		}
	case "logging/setLevel":
		ss.setLevel = e.line
	case "resources/subscribe":
		if uri := gjson.GetBytes(e.line, "params.uri").String(); uri != "" {
			ss.subs[uri] = true
		}
	case "tools/list":
		if !e.cursor && !gjson.GetBytes(line, "result.nextCursor").Exists() {
			ss.toolsSeen = []byte(gjson.GetBytes(line, "result.tools").Raw)
		}
		ss.notePolicies(line)
	}
	return ss.era != era
}

// notePolicies records the retry-relevant annotations of a tools/list
// result.
func (ss *session) notePolicies(line []byte) {
	gjson.GetBytes(line, "result.tools").ForEach(func(_, t gjson.Result) bool {
		name := t.Get("name").String()
		if name != "" {
			a := t.Get("annotations")
			ss.tools[name] = toolPolicy{
				readOnly:   a.Get("readOnlyHint").Type == gjson.True,
				idempotent: a.Get("idempotentHint").Type == gjson.True,
			}
		}
		return true
	})
}

func (ss *session) subList() []string {
	out := make([]string, 0, len(ss.subs))
	for u := range ss.subs {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// retryable lists the client->server methods that are safe to send again
// to a new server: they read, or they set state the new server must have
// anyway. tools/call is decided by the tool's annotations; anything not
// listed (custom methods, tasks/*) is not re-sent, but for a tasks/get or
// tasks/cancel of a task whose process ended (tasks.go).
var retryable = map[string]bool{
	"initialize":               true,
	"server/discover":          true,
	"ping":                     true,
	"tools/list":               true,
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
	"resources/subscribe":      true,
	"resources/unsubscribe":    true,
	"prompts/list":             true,
	"prompts/get":              true,
	"completion/complete":      true,
	"logging/setLevel":         true,
	"subscriptions/listen":     true,
}
