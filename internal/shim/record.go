package shim

import (
	"encoding/json"
	"os"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// record queues a snapshot of the state record for the writer; the newest
// snapshot replaces one not yet written.
func (s *Shim) record() {
	if !s.o.Record {
		return
	}
	s.mu.Lock()
	r := &state.Record{
		Server:          s.o.Name,
		Session:         s.o.Session,
		ClaudePID:       s.o.ClaudePID,
		ShimPID:         s.pid,
		Mode:            s.mode,
		Target:          s.target,
		State:           s.phase,
		ChildPID:        s.run.childPID,
		Restarts:        s.restarts,
		IdleExits:       s.idleExits,
		Era:             s.sess.era,
		ProtocolVersion: s.sess.version,
		LastError:       s.lastErr,
		StderrTail:      s.stderr,
		Retried:         s.retried,
		FailedCalls:     s.failedN,
		Started:         s.start.UTC(),
	}
	if s.note.due {
		// The model is owed the news of this restart: whoever claims
		// the key's told/ marker first tells it (the plugin's monitor,
		// the PreToolUse hook for a Note, or withNote).
		r.NoteKey = s.note.key
	}
	r.NotAnswering = s.quietRecord(s.run.quiet)
	if s.note.pending != "" {
		r.Note = s.note.pending
	}
	if s.run.childPID != 0 {
		r.ChildStarted = s.run.childAt.UTC()
	}
	if s.isFailed() {
		r.Failure = string(health.ShimFailed)
		if s.cantStart {
			r.Failure = string(health.CannotStart)
		}
	}
	if s.lastExit != nil {
		ex := s.lastExit.Exit
		r.LastExit = &ex
	}
	s.mu.Unlock()
	if k, ok := s.o.Dialer.(interface{ KeepRecord(*state.Record) }); ok {
		k.KeepRecord(r) // shim --keep (internal/keep)
	}
	for {
		select {
		case s.records <- r:
			return
		default:
		}
		select {
		case <-s.records:
		default:
		}
	}
}

// writeRecords writes queued snapshots until the channel is closed. Owned
// by Run.
func (s *Shim) writeRecords() {
	for r := range s.records {
		if err := state.Write(r); err != nil {
			s.log.Warn("write state record", "err", err)
		}
	}
}

// event appends one JSON line to the lifecycle log.
func (s *Shim) event(name string, kv ...any) {
	if s.o.Lifecycle == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	_ = state.WriteEvent(s.o.Lifecycle, s.o.Name, name, append(kv, "shim_pid", s.pid)...)
}

// Signalled records that the shim got sig. Go does not expose the
// sender's pid (siginfo), so the record says what is known: the shim's
// parent (Claude Code sends SIGINT at session end) and whether it is still
// alive.
func (s *Shim) Signalled(sig os.Signal) {
	ppid := os.Getppid()
	alive := procinfo.Alive(ppid)
	s.event("signal", "signal", sig.String(), "parent_pid", ppid, "parent_alive", alive, "original_parent_pid", s.o.ClaudePID)
}

// maxTrafficMsg is the size past which the traffic log keeps only the
// start of a message.
const maxTrafficMsg = 64 << 10

// traffic logs one message (dir is "c2s" or "s2c"), secrets redacted.
func (s *Shim) traffic(dir string, line []byte) {
	if s.o.Traffic == nil {
		return
	}
	m := map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "dir": dir, "bytes": len(line)}
	if len(line) <= maxTrafficMsg {
		red := redact.String(string(line))
		if jsoncheck.Valid([]byte(red)) == nil {
			m["msg"] = json.RawMessage(red)
		} else {
			m["text"] = red
		}
	} else {
		m["truncated"] = redact.String(string(line[:1024]))
	}
	s.trafficWrite(m)
}

// trafficLong logs a long message passed on as it came (stream.go): its
// size and its first bytes, as traffic logs any message over
// maxTrafficMsg.
func (s *Shim) trafficLong(dir string, n int64, head []byte) {
	if s.o.Traffic == nil {
		return
	}
	s.trafficWrite(map[string]any{"time": time.Now().UTC().Format(time.RFC3339Nano), "dir": dir, "bytes": n,
		"truncated": redact.String(string(head[:min(len(head), 1024)]))})
}

func (s *Shim) trafficWrite(m map[string]any) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.o.Traffic.Write(append(b, '\n'))
}
