package hook

import (
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// tailBytes is how much of the incident log the per-call hooks read: enough
// for the last few hundred incidents, cheap enough for every MCP call.
const tailBytes = 64 << 10

// incidents is the incident log's recent tail, oldest first; nothing when
// the log did not change within the window (one open and stat on a quiet
// machine). Whether an incident is open is state's rule (state.IsOpen).
func (h *Handler) incidents() []state.Incident {
	log, err := state.ReadIncidents(tailBytes, h.Now().Add(-state.IncidentWindow))
	if err != nil {
		h.Log.Warn("reading the incident log", "err", err)
	}
	return log
}

// openAnywhere reports whether server has an incident open in any session
// (state.OpenIncidents), the rule status, doctor and heal use.
func (h *Handler) openAnywhere(server string) bool {
	return len(state.OpenIncidents(h.incidents(), server, "", h.Now())) > 0
}

// record appends an incident; failing to record is logged, not fatal.
func (h *Handler) record(in state.Incident) {
	if in.Time.IsZero() {
		in.Time = h.Now().UTC()
	}
	if in.ClaudePID == 0 {
		in.ClaudePID = h.claudePID()
	}
	in.Error = text.Clip(redact.String(in.Error), 300) // redacted whole: a cut could hide a secret's shape
	if err := state.AppendIncident(in); err != nil {
		h.Log.Error("recording incident", "server", in.Server, "err", err)
	}
	// An open incident sends the next calls to the binary's PreToolUse
	// (pretool.go) instead of the launcher's healthy path: it warns about
	// a server found dead, and closes the incident once a call to the
	// server did not fail. The marker is for every session: it goes once
	// no session has an incident of the server open.
	if in.Class != string(health.OK) {
		if err := state.MarkServer(in.Server, true); err != nil {
			h.Log.Error("attention marker", "server", in.Server, "err", err)
		}
		return
	}
	if err := state.ForgetCalled(in.Session, in.Server); err != nil {
		h.Log.Error("call mark", "server", in.Server, "err", err)
	}
	if !h.openAnywhere(in.Server) {
		h.attention(in.Server, false)
	}
}

func (h *Handler) attention(server string, on bool) {
	if err := state.MarkServer(server, on); err != nil {
		h.Log.Error("attention marker", "server", server, "err", err)
	}
}
