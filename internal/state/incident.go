package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	f, err := OpenFile(IncidentsPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
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

// Incidents returns the last n incidents (all when n <= 0), oldest first,
// optionally only those of server (empty: all servers).
func Incidents(server string, n int) ([]Incident, error) {
	f, err := OpenFile(IncidentsPath(), os.O_RDONLY)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Incident
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var in Incident
		if json.Unmarshal(sc.Bytes(), &in) != nil {
			continue
		}
		if server != "" && in.Server != server {
			continue
		}
		out = append(out, in)
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out, sc.Err()
}
