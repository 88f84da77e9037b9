package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// findShims is state.Find for the per-call hooks: the same matching rule
// (server, then session when both sides know it, else Claude Code's pid),
// but records of other servers are rejected from a gjson peek, before the
// liveness check and without encoding/json, whose first use costs a
// fresh process more than the rest of the healthy path together. Stale
// records are skipped, not deleted: cleaning up is state.List's job.
func findShims(server, session string, claudePID int) []*state.Record {
	ents, err := os.ReadDir(state.ShimsDir())
	if err != nil {
		return nil
	}
	var out []*state.Record
	for _, e := range ents {
		name := e.Name()
		pid, err := strconv.Atoi(strings.TrimSuffix(name, ".json"))
		if err != nil || !strings.HasSuffix(name, ".json") {
			continue
		}
		// state.ReadFile: a FIFO, a device or a link planted among the
		// records is refused without blocking, and a huge file costs at
		// most state.MaxRecordBytes.
		b, err := state.ReadFile(filepath.Join(state.ShimsDir(), name), state.MaxRecordBytes)
		if err != nil || jsoncheck.Valid(b) != nil {
			continue
		}
		peek := gjson.GetManyBytes(b, "server", "session", "claude_pid")
		if peek[0].String() != server {
			continue
		}
		if rs := peek[1].String(); session != "" && rs != "" {
			if rs != session {
				continue
			}
		} else if claudePID > 0 && int(peek[2].Int()) != claudePID {
			continue
		}
		if !procinfo.Alive(pid) {
			continue
		}
		var r state.Record
		if json.Unmarshal(b, &r) != nil || r.ShimPID != pid || !state.Live(&r) {
			// Live also rules out a pid the kernel gave to another process
			// since the shim died (its recorded start time differs).
			continue
		}
		out = append(out, &r)
	}
	return out
}
