package hook

import (
	"bytes"
	"encoding/json"
	"github.com/mcp-heal/mcp-heal/internal/text"
	"io"
	"os"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// tailBytes is how much of the incident log the per-call hooks read: enough
// for the last few hundred incidents, cheap enough for every MCP call.
const tailBytes = 64 << 10

// openIncident returns the last incident of server in this session (or of
// any session when either side does not know it) newer than window, unless
// the server has been healthy since (an OK incident). It reads the log only
// when the log itself changed within window, so on a quiet machine it costs
// one stat.
func (h *Handler) openIncident(server, session string, window time.Duration) *state.Incident {
	f, err := os.Open(state.IncidentsPath())
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || h.Now().Sub(st.ModTime()) > window {
		return nil
	}
	off := st.Size() - tailBytes
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	// Newest last: scan backwards for this server's latest incident.
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
		if session != "" && in.Session != "" && in.Session != session {
			continue
		}
		if in.Class == string(OK) || h.Now().Sub(in.Time) > window {
			return nil
		}
		return &in
	}
	return nil
}

// record appends an incident; failing to record is logged, not fatal.
func (h *Handler) record(in state.Incident) {
	if in.Time.IsZero() {
		in.Time = h.Now().UTC()
	}
	in.Error = text.Clip(in.Error, 300)
	if err := state.AppendIncident(in); err != nil {
		h.Log.Error("recording incident", "server", in.Server, "err", err)
	}
	// An open incident sends the next calls to the binary's PreToolUse
	// (pretool.go) instead of the launcher's healthy path: it warns about
	// a server found dead, and closes the incident once a call to the
	// server did not fail.
	ok := in.Class == string(OK)
	if err := state.MarkServer(in.Server, !ok); err != nil {
		h.Log.Error("attention marker", "server", in.Server, "err", err)
	}
	if ok {
		if err := state.MarkCalled(in.Server, false); err != nil {
			h.Log.Error("call marker", "server", in.Server, "err", err)
		}
	}
}

func (h *Handler) attention(server string, on bool) {
	if err := state.MarkServer(server, on); err != nil {
		h.Log.Error("attention marker", "server", server, "err", err)
	}
}
