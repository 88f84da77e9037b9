package state

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/natefinch/atomic"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// A shim removes its record when it exits: its client closed the pipe,
// or it was asked to stop (SIGTERM, SIGINT). A record whose shim is gone
// is one it never removed: the shim was killed (SIGKILL, the OOM killer)
// or crashed, and Claude Code lost the server with it. Whoever finds such
// a record (the monitor, a hook, status) moves it here, as a Gone, so that
// the death is reported ("its shim exited ...; /mcp reconnect NAME"), not
// read as a server never started.

// GoneKeep is how long a Gone is kept: a day, as the incidents.
const GoneKeep = 24 * time.Hour

// Gone is the last record of a shim that died without removing it.
type Gone struct {
	Record
	// FoundGone is when a reader found the shim's process gone; it died
	// after Record.Updated (it wrote the record then) and before this.
	FoundGone time.Time `json:"found_gone"`
}

// GoneDir holds the Gone records, one a shim pid.
func GoneDir() string { return filepath.Join(ShimsDir(), "gone") }

func gonePath(pid int) string { return filepath.Join(GoneDir(), strconv.Itoa(pid)+".json") }

// bury keeps r, the record of a shim found gone, as a Gone. A record the
// shim was giving up anyway (stopping) or a kept server's (its guardian
// writes it: internal/keep) is no death to report. Errors are dropped:
// the record is deleted all the same, as before.
func bury(r *Record) {
	if r == nil || r.State == Stopping || r.Kept {
		return
	}
	if g, err := ReadGone(r.ShimPID); err == nil && g.ShimStart == r.ShimStart && g.Started.Equal(r.Started) {
		return // another reader found it first
	}
	b, err := json.Marshal(Gone{Record: *r, FoundGone: time.Now().UTC()})
	if err != nil || EnsureDir(GoneDir()) != nil {
		return
	}
	_ = atomic.WriteFile(gonePath(r.ShimPID), strings.NewReader(string(b)))
	sweepGone(time.Now().Add(-GoneKeep))
}

// sweepGone deletes the Gone records found before cutoff.
func sweepGone(cutoff time.Time) {
	ents, _ := os.ReadDir(GoneDir())
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil {
			continue
		}
		if g, err := ReadGone(pid); err != nil || g.FoundGone.Before(cutoff) {
			_ = os.Remove(gonePath(pid))
		}
	}
}

// ReadGone returns the Gone record of shim pid.
func ReadGone(pid int) (*Gone, error) {
	b, err := ReadFile(gonePath(pid), MaxRecordBytes)
	if err != nil {
		return nil, err
	}
	var g Gone
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, err
	}
	if g.ShimPID != pid {
		return nil, errors.New("state: gone record of another pid")
	}
	return &g, nil
}

// FindGone returns the Gone records of server in one Claude Code session
// (Find's rule), newest first, of sessions whose Claude Code still runs:
// an ended session's dead shim is history.
func FindGone(server, session string, claudePID int) []*Gone {
	ents, _ := os.ReadDir(GoneDir())
	var out []*Gone
	for _, e := range ents {
		pid, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil {
			continue
		}
		g, err := ReadGone(pid)
		if err != nil || g.Server != server || !matches(g.Session, g.ClaudePID, session, claudePID) {
			continue
		}
		if g.ClaudePID > 0 && !procinfo.Alive(g.ClaudePID) {
			continue
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FoundGone.After(out[j].FoundGone) })
	return out
}
