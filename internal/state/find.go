package state

import (
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// Find returns the live shim records for server in one Claude Code
// session, oldest first: matched by session id or by the Claude Code pid
// (hooks and the status line get CLAUDE_PID; a shim's parent is that
// process), so a session's servers stay its own across /clear, which
// changes the id. Empty session and zero pid match every record of server.
//
// It is the one rule for "find this server's shim", the per-call hooks'
// too: a record of another server is passed over from a gjson peek, before
// the liveness check and without encoding/json, whose first use costs a
// fresh hook process more than the rest of its healthy path together.
// Records whose shim is gone are deleted, as List does; unreadable ones
// are skipped.
func Find(server, session string, claudePID int) ([]*Record, error) {
	return find(server, false, session, claudePID)
}

// FindSession returns the live shim records of every server of one Claude
// Code session (the plugin's monitor), by Find's rule.
func FindSession(session string, claudePID int) ([]*Record, error) {
	return find("", true, session, claudePID)
}

// RecordsChanged is when the shim records last changed: the time of their
// directory, which every Write (a rename into it) and Remove changes
// (zero when there is none). One stat, for a watcher that reads the
// records only after a change.
func RecordsChanged() time.Time {
	fi, err := os.Stat(ShimsDir())
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

func find(server string, all bool, session string, claudePID int) ([]*Record, error) {
	ents, err := os.ReadDir(ShimsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Record
	for _, e := range ents {
		name := e.Name()
		pid, err := strconv.Atoi(strings.TrimSuffix(name, ".json"))
		if err != nil || !strings.HasSuffix(name, ".json") {
			continue
		}
		// ReadFile: a FIFO, a device or a link planted among the records
		// is refused without blocking, and a huge file costs at most
		// MaxRecordBytes.
		b, err := ReadFile(recordPath(pid), MaxRecordBytes)
		if err != nil || jsoncheck.Valid(b) != nil {
			if !procinfo.Alive(pid) {
				prune(pid, nil) // an unreadable record of a gone shim
			}
			continue
		}
		peek := gjson.GetManyBytes(b, "server", "session", "claude_pid")
		if !all && peek[0].String() != server || !matches(peek[1].String(), int(peek[2].Int()), session, claudePID) {
			continue
		}
		var r Record
		if !procinfo.Alive(pid) {
			if json.Unmarshal(b, &r) == nil && r.ShimPID == pid {
				bury(&r) // it died without removing its record (gone.go)
			}
			prune(pid, nil)
			continue
		}
		if json.Unmarshal(b, &r) != nil || r.ShimPID != pid {
			continue
		}
		if stale(&r) {
			// The pid names another process since the shim died.
			bury(&r)
			prune(pid, &r)
			continue
		}
		out = append(out, &r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

// InSession reports whether r is a shim of the session (id session, under
// the Claude Code of claudePID), by Find's rule: status's, for the records
// it has listed already.
func InSession(r *Record, session string, claudePID int) bool {
	return matches(r.Session, r.ClaudePID, session, claudePID)
}

// matches reports whether a record in session recSession under Claude
// Code recClaude is one of the session asked for: the same session id,
// or the same Claude Code process (/clear gives a session a new id and
// keeps its MCP servers, whose shims recorded the old one). With neither
// side's pid known, two known ids that differ decide it.
func matches(recSession string, recClaude int, session string, claudePID int) bool {
	if session != "" && recSession == session {
		return true
	}
	if claudePID > 0 && recClaude == claudePID {
		return true
	}
	if session != "" && recSession != "" {
		return false
	}
	return claudePID <= 0
}
