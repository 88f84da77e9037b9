// Package state holds the records through which shims, hooks and commands
// know about each other: one JSON file per running shim, an append-only
// incident log, and per-server lifecycle logs, all under
// $XDG_STATE_HOME/mcp-heal with 0700 directories and 0600 files.
//
// The record is a contract: shims write it on every transition, hooks and
// `mcp-heal status` read it. Bump Schema on an incompatible change.
package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/natefinch/atomic"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/paths"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// Schema is the version of Record's layout.
const Schema = 1

// Mode of a shim.
const (
	ModeStdio  = "stdio"
	ModeRemote = "remote"
)

// States a shim reports.
const (
	Starting   = "starting"   // first spawn or first session not yet up
	Running    = "running"    // child up and handshake done
	Restarting = "restarting" // child died; respawning and replaying now
	Backoff    = "backoff"    // waiting before the next respawn attempt
	Failed     = "failed"     // crash loop: requests are answered with an error
	Stopping   = "stopping"   // client went away; shutting down
	// Idle: the server exited by itself (code 0, no call outstanding):
	// it starts on the next call. Healthy; not a restart (issue 30).
	Idle = "idle"
)

// Exit describes how a child (or remote session) ended.
type Exit struct {
	Code     *int      `json:"code,omitempty"`   // exit code, when it exited
	Signal   string    `json:"signal,omitempty"` // e.g. "killed", when signalled
	Reason   string    `json:"reason,omitempty"` // one line: "exited with code 1", "hung: no ping reply in 2s", "session lost (HTTP 404)"
	At       time.Time `json:"at"`
	UptimeMS int64     `json:"uptime_ms"`
	// Cause is what ended the run (one of the Cause constants; "" when
	// only Reason is known), Detail the cause's own words (what a hung
	// server left unanswered, a remote's error), SignalNum the signal's
	// number and Strays how many processes the server had left outside its
	// process group (they were stopped with it). internal/health builds
	// the sentences the shim sends from these.
	Cause     string `json:"cause,omitempty"`
	Detail    string `json:"detail,omitempty"`
	SignalNum int    `json:"signal_num,omitempty"`
	Strays    int    `json:"strays,omitempty"`
}

// What ended a server's run (Exit.Cause). Supervision decides which;
// internal/health owns the words for each.
const (
	CauseExit         = "exit"          // the process exited (Code)
	CauseSignal       = "signal"        // a signal killed it (Signal, SignalNum), from outside the shim
	CauseHang         = "hang"          // the shim killed it: it answered no ping (Detail)
	CauseStopped      = "stopped"       // the shim killed it: a signal had stopped it (SIGSTOP) during a call (Detail)
	CauseStdoutClosed = "stdout-closed" // it closed its stdout; the shim ended the run
	CauseCannotStart  = "cannot-start"  // its command cannot start (Detail)
	CauseStartFailed  = "start-failed"  // a start or connection failed (Detail), maybe not for good
	CauseRemote       = "remote"        // a remote connection or session ended (Detail: the bridge's reason)
	CauseOversize     = "oversize"      // it sent a message over the size limit (Detail)
	CauseRestart      = "restart"       // restarted on purpose (Detail: who asked)
	CauseReplay       = "replay"        // the shim killed it: replaying the handshake failed (Detail)
	CauseKept         = "kept"          // let go of, left running for the next client (--keep)
)

// NotAnswering is a server that has given no sign of life while it owes
// a call: since when, and the oldest call it owes (Tool for a tools/call).
// Cancelled: the client cancelled that call (Claude Code's tool time-out,
// the user's Esc) at Since, and the server has answered nothing since,
// not even a ping; it is left running (unless the shim runs with
// --kill-on-cancel), as Claude Code alone would leave it.
type NotAnswering struct {
	Since     time.Time `json:"since"`
	Method    string    `json:"method"`
	Tool      string    `json:"tool,omitempty"`
	Cancelled bool      `json:"cancelled,omitempty"`
}

// Record is the state of one running shim.
type Record struct {
	Schema    int    `json:"schema"`
	Server    string `json:"server"`            // name as Claude Code knows it
	Session   string `json:"session,omitempty"` // CLAUDE_CODE_SESSION_ID
	ClaudePID int    `json:"claude_pid"`        // the shim's parent
	ShimPID   int    `json:"shim_pid"`
	// ShimStart and ShimExe identify the shim process beyond its pid (the
	// kernel's start time and the executable, from procinfo): a shim
	// SIGKILLed by the OOM killer leaves its record, and its pid may since
	// name another process. Nothing signals ShimPID unless they match
	// (VerifyShim). Write fills them in for the calling process.
	ShimStart string `json:"shim_start,omitempty"`
	ShimExe   string `json:"shim_exe,omitempty"`
	Mode      string `json:"mode"`   // ModeStdio or ModeRemote
	Target    string `json:"target"` // command line or URL, secrets removed
	State     string `json:"state"`
	ChildPID  int    `json:"child_pid,omitempty"`
	Restarts  int    `json:"restarts"`
	// IdleExits counts the runs that ended by the server's own choice
	// (State Idle): not restarts, no state the model lost to the shim.
	IdleExits int `json:"idle_exits,omitempty"`
	// Era is "stateless" (server/discover, 2026-07-28) or "handshake"
	// (initialize), once the client negotiated; ProtocolVersion is the one
	// agreed.
	Era             string    `json:"era,omitempty"`
	ProtocolVersion string    `json:"protocol_version,omitempty"`
	LastExit        *Exit     `json:"last_exit,omitempty"`
	LastError       string    `json:"last_error,omitempty"`
	StderrTail      []string  `json:"stderr_tail,omitempty"`
	Retried         int       `json:"retried"` // requests re-sent after a respawn
	FailedCalls     int       `json:"failed_calls"`
	Started         time.Time `json:"started"`
	ChildStarted    time.Time `json:"child_started,omitempty"`
	Updated         time.Time `json:"updated"`

	// Kept servers (shim --keep): the server outlives its shim for a
	// window under a kept guardian listening on KeepSocket. While no shim
	// is attached the guardian writes the record (ShimPID is its pid).
	Kept          bool       `json:"kept,omitempty"`
	Attached      bool       `json:"attached,omitempty"`
	DetachedSince *time.Time `json:"detached_since,omitempty"`
	Expires       *time.Time `json:"expires,omitempty"`
	KeepSocket    string     `json:"keep_socket,omitempty"`
	// KeepSlot is the kept server's keep.Slot (name, project, --keep-env
	// values): only a shim of the same slot may replace it.
	KeepSlot string `json:"keep_slot,omitempty"`

	// Failure says why State is Failed: "cannot-start" (the command is not
	// found or not executable) or "shim-failed" (crash loop); see
	// internal/health.
	Failure string `json:"failure,omitempty"`
	// Note is the restart note the model is owed and the shim could not
	// add to a result (every result had structuredContent): the
	// PreToolUse hook gives it as context, once, claiming NoteKey
	// (ClaimTold) as the shim does before adding it to a plain result.
	Note    string `json:"note,omitempty"`
	NoteKey string `json:"note_key,omitempty"`
	// NotAnswering is set while the server owes a call and has given no
	// sign of life (no message, no answer to a ping for the ping time-out,
	// no CPU time) since NotAnswering.Since. The shim does not act on it
	// by default (silence alone is no proof of a hang): it tells.
	NotAnswering *NotAnswering `json:"not_answering,omitempty"`
}

// Quiet is the server's not-answering record while the shim runs it, nil
// otherwise: the one reading of NotAnswering (a record in another state
// may still carry a stale one), which every reader outside state calls.
func (r *Record) Quiet() *NotAnswering {
	if r == nil || r.State != Running {
		return nil
	}
	return r.NotAnswering
}

// Dir is the mcp-heal state directory (internal/paths: the rule the
// plugin's launcher mirrors).
func Dir() string { return paths.Current().State }

// ShimsDir holds one record per running shim.
func ShimsDir() string { return filepath.Join(Dir(), "shims") }

// LogsDir holds per-server lifecycle and traffic logs.
func LogsDir() string { return filepath.Join(Dir(), "logs") }

// IncidentsPath is the append-only incident log.
func IncidentsPath() string { return filepath.Join(Dir(), "incidents.jsonl") }

// LogPath is the lifecycle log of server.
func LogPath(server string) string { return filepath.Join(LogsDir(), SafeName(server)+".log") }

// TrafficLogPath is the opt-in traffic log of server.
func TrafficLogPath(server string) string {
	return filepath.Join(LogsDir(), SafeName(server)+".traffic.log")
}

// SafeName maps a server name to a file name component.
func SafeName(server string) string {
	if server == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range server {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "." || s == ".." {
		s = "_"
	}
	if len(s) > 100 {
		// A file name has 255 bytes at most: a long name keeps its start
		// and a hash of the whole, so two long names stay apart.
		sum := sha256.Sum256([]byte(server))
		s = s[:80] + "-" + hex.EncodeToString(sum[:8])
	}
	return s
}

func recordPath(pid int) string { return filepath.Join(ShimsDir(), strconv.Itoa(pid)+".json") }

// Write replaces the record of r.ShimPID atomically, stamping Schema and
// Updated.
func Write(r *Record) error {
	if r.ShimPID <= 0 {
		return errors.New("state: record without shim pid")
	}
	if err := EnsureDir(ShimsDir()); err != nil {
		return err
	}
	r.Schema = Schema
	r.Updated = time.Now().UTC()
	// Hooks show records to the model: whatever the writer redacted, the
	// free text goes through the one rule again (it changes nothing twice).
	r.Target, r.LastError = redact.String(r.Target), redact.String(r.LastError)
	r.StderrTail = redact.Strings(r.StderrTail)
	if r.LastExit != nil {
		e := *r.LastExit
		e.Reason, e.Detail = redact.String(e.Reason), redact.String(e.Detail)
		r.LastExit = &e
	}
	if r.ShimStart == "" && r.ShimPID == os.Getpid() {
		if id, err := self(); err == nil {
			r.ShimStart, r.ShimExe = id.StartKey, id.Exe
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	// atomic.WriteFile writes a temp file (0600 from os.CreateTemp) in the
	// same directory and renames it over the target.
	if err := atomic.WriteFile(recordPath(r.ShimPID), strings.NewReader(string(b))); err != nil {
		return err
	}
	return SetAttention(ShimAttention(r.ShimPID), r.State == Failed || r.Note != "" || r.Quiet() != nil)
}

// Remove deletes the record of shim pid; a missing record is not an error.
func Remove(pid int) error {
	_ = SetAttention(ShimAttention(pid), false)
	err := os.Remove(recordPath(pid))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Read returns the record of shim pid.
func Read(pid int) (*Record, error) { return readFile(recordPath(pid)) }

func readFile(path string) (*Record, error) {
	b, err := ReadFile(path, MaxRecordBytes)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := jsoncheck.Valid(b); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &r, nil
}

// List returns the records of live shims, oldest first. Records whose shim
// is gone, or whose pid now names another process, are stale: List deletes
// them and leaves them out. Unreadable records are skipped.
func List() ([]*Record, error) { return find("", true, "", 0) }

// VerifyShim returns nil when r's shim is alive and is the process that
// wrote r (same start time and executable). Callers check it immediately
// before signalling r.ShimPID. A record without an identity (written by a
// version before it was recorded) never verifies.
func VerifyShim(r *Record) error {
	err := procinfo.Verify(r.ShimPID, procinfo.Identity{StartKey: r.ShimStart, Exe: r.ShimExe})
	if err != nil {
		return fmt.Errorf("shim %d of %q: %w", r.ShimPID, r.Server, err)
	}
	return nil
}

// SignalShim sends sig to r's shim with send (NudgeShim: kill(2), or on
// Windows the shim's heal event for SIGHUP; or a test's stand-in) after
// VerifyShim. A record that fails the check because its
// shim is gone or its pid was reused is deleted.
func SignalShim(r *Record, sig syscall.Signal, send func(int, syscall.Signal) error) error {
	if err := VerifyShim(r); err != nil {
		if stale(r) {
			prune(r.ShimPID, r)
		}
		return err
	}
	return send(r.ShimPID, sig)
}

// Live reports whether r's shim may still be running: its pid is alive
// and, when r records the shim's identity, names that process. A reader
// that skips List (the per-call hooks) checks it for each record it uses.
func Live(r *Record) bool { return procinfo.Alive(r.ShimPID) && !stale(r) }

// stale reports whether r's shim is certainly not running: the process is
// gone, or its pid names another process. A record without an identity is
// judged by its pid alone (it is listed, but never signalled).
func stale(r *Record) bool {
	if r.ShimStart == "" {
		return !procinfo.Alive(r.ShimPID)
	}
	err := VerifyShim(r)
	var mm *procinfo.MismatchError
	return errors.Is(err, procinfo.ErrNotFound) || errors.As(err, &mm)
}

// prune deletes the record of pid and its attention marker. When r is the
// record judged stale, the file is deleted only if it still holds that
// record: a new shim that got the same pid may have written its own since.
func prune(pid int, r *Record) {
	if r != nil {
		if now, err := Read(pid); err != nil || now.ShimStart != r.ShimStart || !now.Started.Equal(r.Started) {
			return
		}
	}
	_ = os.Remove(recordPath(pid))
	_ = SetAttention(ShimAttention(pid), false)
}

// self is the identity of this process, looked up once.
var self = sync.OnceValues(procinfo.Self)
