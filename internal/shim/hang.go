package shim

import (
	"slices"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/upstream"
)

// How a hang is told from a slow call (measured: docs/shim.md, "Hangs").
//
// The SDKs most servers are built on (TypeScript, Go, mcp-go, FastMCP)
// answer ping within milliseconds while a tool call runs. So a call
// outstanding for DefaultHangAfter with nothing heard from the server
// starts a ping, and a ping unanswered for DefaultPingTimeout means the
// server is hung: detected within about 15 s of the call. A server that
// answers the ping is busy, not hung; it is pinged again after another
// HangAfter of silence and never killed for being slow.
//
// A server that reads one message at a time (a fully single-threaded
// one) answers the ping only after the call: the shim learns that from
// the first probe it answers late, and from then on waits SerialHangAfter
// before it pings that server during a call. A process stopped by a signal
// (SIGSTOP: state T) cannot answer anything and is killed once two janitor
// ticks in a row saw it stopped, without a ping.
const (
	DefaultHangAfter       = 3 * time.Second
	DefaultPingTimeout     = 10 * time.Second
	DefaultSerialHangAfter = 60 * time.Second
)

// pingHabit is what the shim has learnt about a server's pings during
// calls. It survives restarts: the next process runs the same program.
type pingHabit int8

const (
	pingsUnknown    pingHabit = iota
	pingsConcurrent           // a ping was answered while a call ran
	pingsSerial               // pings were answered only after the calls
)

// CauseStopped starts the reason a stopped server was killed for
// (health.KillReason of state.CauseStopped).
const CauseStopped = "hung: stopped by a signal (SIGSTOP)"

// hangAfter is how long a call may go with nothing heard from the server
// before it is pinged. Called with mu held.
func (s *Shim) hangAfter() time.Duration {
	if s.pings == pingsSerial {
		return s.o.SerialHangAfter
	}
	return s.o.HangAfter
}

// callsOn returns the client's calls outstanding on generation gen: its
// requests that wait for an answer. A subscriptions/listen stream is no
// such call: it is open, silent, for as long as the session lasts, and
// pinging the server every few seconds for it would be a cost for nothing.
// Called with mu held.
func (s *Shim) callsOn(gen uint64) []*entry {
	var out []*entry
	for _, e := range s.inflight {
		if isCall(e, gen) {
			out = append(out, e)
		}
	}
	return out
}

// isCall reports whether e is a call of the client's outstanding on
// generation gen (see callsOn).
func isCall(e *entry, gen uint64) bool {
	return e.gen == gen && !e.injected && !e.cancelled && e.method != "subscriptions/listen"
}

// notePong learns from a probe answered on generation gen how the server
// treats pings: of the calls outstanding when it was sent, one was still
// outstanding when the answer came (open: answered during a call,
// concurrent) or none was (answered after them: serial). Concurrent is
// final: a late answer may also be a call that ended as the ping arrived.
// Called with mu held.
func (s *Shim) notePong(calls, open []*entry) {
	if len(calls) == 0 || s.pings == pingsConcurrent {
		return
	}
	for _, e := range calls {
		if slices.Contains(open, e) {
			s.pings = pingsConcurrent
			return
		}
	}
	s.pings = pingsSerial
}

// checkStopped kills the server when a call is outstanding and a process
// of the server's tree has been stopped by a signal at two checks in a
// row: it would answer neither the call nor a ping until someone continued
// it. A stop seen once may be a moment's (job control, a profiler), and an
// idle server stopped on purpose harms nobody until a call needs it. Called
// by the janitor alone, which owns stoppedAt. Windows has no such stop
// (procinfo.StoppedIn reports none): the ping probe covers it there.
func (s *Shim) checkStopped() {
	s.mu.Lock()
	var c upstream.Conn
	gen, method := s.gen, ""
	if s.isUp() && s.conn != nil && s.conn != s.killedConn && s.conn.PID() > 0 {
		if calls := s.callsOn(s.gen); len(calls) > 0 {
			c, method = s.conn, calls[0].method
		}
	}
	s.mu.Unlock()
	if c == nil {
		s.stoppedAt = 0
		return
	}
	pid, err := procinfo.StoppedIn(c.PID())
	if err != nil || pid == 0 {
		s.stoppedAt = 0
		return
	}
	if s.stoppedAt != gen {
		s.stoppedAt = gen
		return
	}
	detail := health.StoppedDetail(method, pid)
	s.log.Warn("server is stopped; killing it", "reason", detail)
	s.kill(c, state.CauseStopped, detail)
}
