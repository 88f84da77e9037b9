package keep

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Explain says, from server's lifecycle log, why its last keep did not
// happen (another session attached, the socket unusable, the config
// changed, the window expired, stopped); empty when the last session
// re-attached or the server is not kept.
func Explain(server string) string {
	b, err := state.ReadTail(state.LogPath(server), 256<<10, time.Time{})
	if err != nil {
		return ""
	}
	var last, stopped map[string]any
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"keep-`)) {
			continue
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		ev, _ := m["event"].(string)
		switch ev {
		case "keep-detached":
			continue
		case "keep-stopped":
			stopped = m
		case "keep-started":
			if last != nil && last["event"] == "keep-replaced" {
				continue
			}
		}
		last = m
	}
	if last == nil {
		return ""
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	switch str(last, "event") {
	case "keep-busy":
		return "not kept for the last session: another session was attached to the kept server, so it got a server of its own"
	case "keep-unusable":
		return "not kept: " + str(last, "err")
	case "keep-replaced":
		return "the server's configuration changed, so the kept server of the old configuration was stopped and a new one started"
	case "keep-ended":
		return "the kept server's guardian went away (mcp-heal stop, or it was killed): the session went on with a server of its own"
	case "keep-stopped":
		return "the kept server was stopped: " + strings.TrimPrefix(str(last, "detail"), "stopped: ")
	case "keep-started":
		if stopped != nil {
			return "a new server was started: the previous kept one was stopped (" + strings.TrimPrefix(str(stopped, "detail"), "stopped: ") + ")"
		}
	}
	return ""
}
