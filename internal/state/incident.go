package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"time"

	"github.com/natefinch/atomic"

	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// MaxIncidentBytes is the size past which the incident log is trimmed to its
// newer half.
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
// when it grows past MaxIncidentBytes.
func AppendIncident(in Incident) error {
	if err := EnsureDir(Dir()); err != nil {
		return err
	}
	if in.Time.IsZero() {
		in.Time = time.Now().UTC()
	}
	// The error text comes from Claude Code's hook input, which quotes what
	// a server answered.
	in.Error = redact.String(in.Error)
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(IncidentsPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
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
		trimIncidents()
	}
	return cerr
}

func trimIncidents() {
	b, err := os.ReadFile(IncidentsPath())
	if err != nil || len(b) <= MaxIncidentBytes {
		return
	}
	half := b[len(b)-MaxIncidentBytes/2:]
	if i := bytes.IndexByte(half, '\n'); i >= 0 {
		half = half[i+1:]
	}
	_ = atomic.WriteFile(IncidentsPath(), bytes.NewReader(half))
}

// Incidents returns the last n incidents (all when n <= 0), oldest first,
// optionally only those of server (empty: all servers).
func Incidents(server string, n int) ([]Incident, error) {
	f, err := os.Open(IncidentsPath())
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

// OpenLog opens server's lifecycle log for appending (0600, dir 0700).
func OpenLog(server string) (*os.File, error) { return openAppend(LogPath(server)) }

// OpenTrafficLog opens server's traffic log for appending.
func OpenTrafficLog(server string) (*os.File, error) { return openAppend(TrafficLogPath(server)) }

func openAppend(path string) (*os.File, error) {
	if err := EnsureDir(LogsDir()); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	_ = f.Chmod(0o600)
	return f, nil
}
