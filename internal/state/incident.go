package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/natefinch/atomic"

	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// MaxIncidentBytes is the size past which the incident log is trimmed to its
// newer half; the log as it was before trimming is kept as
// incidents.jsonl.1. So incidents take at most 2 MiB on disk.
const MaxIncidentBytes = 1 << 20

// Incident is one failure a hook or command saw and what it did about it.
type Incident struct {
	Time    time.Time `json:"time"`
	Session string    `json:"session,omitempty"`
	Server  string    `json:"server"`
	Tool    string    `json:"tool,omitempty"`
	Event   string    `json:"event"`            // hook event or command
	Class   string    `json:"class"`            // catalogue class, e.g. "connection-closed"
	Error   string    `json:"error,omitempty"`  // one line, truncated
	Action  string    `json:"action,omitempty"` // what was done: "sighup-shim", "killed-hung", "probed-ok"
	Advice  string    `json:"advice,omitempty"` // what the model was told
	// ClaudePID is the Claude Code process of Session (hooks get
	// CLAUDE_PID), so a reader can tell an ended session's incident from
	// a live one's (SessionEnded); 0 when unknown.
	ClaudePID int `json:"claude_pid,omitempty"`
	// Told is the kind of line (a hook's systemMessage) the user of the
	// session was last shown about the server while this incident's run
	// of failures stayed open: the user sees one line per incident, not
	// one per failed call (internal/hook, tell).
	Told string `json:"told,omitempty"`
}

// AppendIncident adds one line to the incident log (0600), trimming the log
// when it grows past MaxIncidentBytes. Hooks run in parallel (one per tool
// call of a batch): the append and the trim happen under one lock
// (incidents.lock), so a trim never drops a line another hook appended
// meanwhile.
func AppendIncident(in Incident) error {
	if err := EnsureDir(Dir()); err != nil {
		return err
	}
	if in.Time.IsZero() {
		in.Time = time.Now().UTC()
	}
	// The error comes from Claude Code's hook input and the advice quotes
	// probes and stderr: both may hold what a server answered.
	in.Error, in.Advice = redact.String(in.Error), redact.String(in.Advice)
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	unlock, err := lockPath(filepath.Join(Dir(), "incidents.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	f, err := OpenFile(IncidentsPath(), os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	// An earlier append that failed half-way (a full disk) leaves a line
	// without its newline: this one then starts a line of its own, or
	// both would be one unreadable line.
	line := append(b, '\n')
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, werr := f.Write(line)
	st, serr := f.Stat()
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	if serr == nil && st.Size() > MaxIncidentBytes {
		if err := trimIncidents(); err != nil {
			return fmt.Errorf("trim %s: %w", IncidentsPath(), err)
		}
	}
	return cerr
}

// trimIncidents keeps the newer half of the log; the caller holds the lock.
// The full log is copied to incidents.jsonl.1, then the half is written to
// a new file renamed into place, so readers always find the log, whole.
func trimIncidents() error {
	path := IncidentsPath()
	f, err := OpenFile(path, os.O_RDONLY)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || len(b) <= MaxIncidentBytes {
		return err
	}
	half := b[len(b)-MaxIncidentBytes/2:]
	if i := bytes.IndexByte(half, '\n'); i >= 0 {
		half = half[i+1:]
	}
	if err := atomic.WriteFile(path+".1", bytes.NewReader(b)); err != nil {
		return err
	}
	return atomic.WriteFile(path, bytes.NewReader(half))
}

// ReadIncidents returns the incidents in the last limit bytes of the log,
// oldest first; none when the log has not changed since since (so on a
// quiet machine a hook pays one open and one stat). Every reader (hooks,
// status, doctor, heal) reads the log this way: through OpenFile, bounded.
func ReadIncidents(limit int64, since time.Time) ([]Incident, error) {
	b, err := ReadTail(IncidentsPath(), limit, since)
	if err != nil || len(b) == 0 {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return nil, err
	}
	var out []Incident
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		var in Incident
		if len(line) == 0 || json.Unmarshal(line, &in) != nil || in.Server == "" {
			continue // a torn or foreign line
		}
		out = append(out, in)
	}
	return out, nil
}
