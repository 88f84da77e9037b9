package hook

import (
	"bytes"
	"encoding/json"
	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/text"
	"io"
	"os"
	"slices"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// tailBytes is how much of the incident log the per-call hooks read: enough
// for the last few hundred incidents, cheap enough for every MCP call.
const tailBytes = 64 << 10

// openIncident returns the last incident of server in this session (or of
// any session when either side does not know it) newer than window, unless
// the server has been healthy since (an OK incident).
func (h *Handler) openIncident(server, session string, window time.Duration) *state.Incident {
	var open *state.Incident
	h.scanIncidents(server, window, func(in *state.Incident) bool {
		if session != "" && in.Session != "" && in.Session != session {
			return true // another session's: go on
		}
		if in.Class != string(OK) && h.Now().Sub(in.Time) <= window {
			open = in
		}
		return false
	})
	return open
}

// openAnywhere reports whether server has an incident open in any session,
// by the rule status and doctor use (health.Open).
func (h *Handler) openAnywhere(server string) bool {
	var all []state.Incident
	h.scanIncidents(server, health.IncidentWindow, func(in *state.Incident) bool {
		all = append(all, *in)
		return true
	})
	slices.Reverse(all) // health.Open takes the log's order, oldest first
	return len(health.Open(all, server, h.Now())) > 0
}

// scanIncidents calls f with the incidents of server, newest first, while
// it returns true. It reads the log's tail only when the log itself
// changed within window, so on a quiet machine it costs one stat.
func (h *Handler) scanIncidents(server string, window time.Duration, f func(*state.Incident) bool) {
	file, err := os.Open(state.IncidentsPath())
	if err != nil {
		return
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil || h.Now().Sub(st.ModTime()) > window {
		return
	}
	off := st.Size() - tailBytes
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := file.ReadAt(buf, off); err != nil && err != io.EOF {
		return
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	// Newest last: scan backwards.
	for len(buf) > 0 {
		line := buf
		if i := bytes.LastIndexByte(bytes.TrimRight(buf, "\n"), '\n'); i >= 0 {
			line, buf = buf[i+1:], buf[:i]
		} else {
			buf = nil
		}
		if !bytes.Contains(line, []byte(`"server":`)) {
			continue
		}
		var in state.Incident
		if json.Unmarshal(line, &in) != nil || in.Server != server {
			continue
		}
		if !f(&in) {
			return
		}
	}
}

// record appends an incident; failing to record is logged, not fatal.
func (h *Handler) record(in state.Incident) {
	if in.Time.IsZero() {
		in.Time = h.Now().UTC()
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
	if in.Class != string(OK) {
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
