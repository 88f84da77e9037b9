// Package monitor is `mcp-heal monitor`, the plugin's monitor: a process
// Claude Code starts for each interactive session (the plugin's
// monitors/monitors.json) and hands every line of whose stdout to the
// model as a task notification, which wakes an idle session. It prints
// one short line per change of this session's servers that the model
// should act on: a restart (the state the server held is gone), a crash
// loop or a command that cannot start (its calls fail: what to run), a
// server that owes a call and gives no sign of life (state.NotAnswering),
// a server that works again, a shim that died (killed or crashed: it left
// its record, state.Gone). A healthy session gets nothing.
//
// It watches the shims' state records (internal/state): one stat of the
// records' directory per poll (state.RecordsChanged: a record is replaced
// by a rename, which changes the directory's time) and a look at each
// known shim's pid (a killed shim changes nothing in the directory), and
// the session's records are read (state.FindSession) only after a change.
// Lines are bounded in rate (Options.Gap, Options.Burst). A
// restart's line claims the restart note's told/ marker (note_key) first,
// so the model hears of a restart once: from the monitor, or from the
// note on a result, or from the PreToolUse hook, whoever is first.
package monitor

import (
	"context"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/health"
	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
)

// Options configure Run.
type Options struct {
	Session   string // CLAUDE_CODE_SESSION_ID: whose shims to watch
	ClaudePID int    // CLAUDE_PID: the session's Claude Code; Run ends when it is gone
	Out       io.Writer
	Poll      time.Duration // how often the records' directory is looked at (1 s)
	// Tick, when non-nil, paces the polls instead of a ticker of Poll:
	// a test sends a tick for each poll it wants, and knows a poll has
	// ended when Run takes the next tick.
	Tick <-chan time.Time
	// Settle is how long a restarted server must stay up before its
	// restart is told (a crash loop is told as one, not as restarts).
	Settle time.Duration
	// Gap is the least time between two lines about one server, Burst
	// the most lines in any minute: what a flapping server can cost the
	// model.
	Gap   time.Duration
	Burst int
	Now   func() time.Time
	List  func(session string, claudePID int) ([]*state.Record, error) // state.FindSession
	Claim func(key string) (bool, error)                               // state.ClaimTold
	Gone  func(pid int) (*state.Gone, error)                           // state.ReadGone
	Alive func(pid int) bool                                           // procinfo.Alive
	// PluginRoot is the plugin version's directory the monitor was
	// started from (the launcher's MCP_HEAL_PLUGIN_ROOT; "" outside a
	// plugin). Once it is gone or marked orphaned (/plugin uninstall, or
	// an update that replaced it), Run ends quietly: Claude Code keeps
	// the monitor of an uninstalled plugin running until /exit.
	PluginRoot string
	// Exe is the binary's own file (os.Executable); once it is gone (the
	// plugin's data directory, which holds the launcher's copy, was
	// removed with the plugin), Run ends quietly too.
	Exe string
}

func (o *Options) defaults() {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Settle <= 0 {
		o.Settle = time.Second
	}
	if o.Gap <= 0 {
		o.Gap = 20 * time.Second
	}
	if o.Burst <= 0 {
		o.Burst = 4
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.List == nil {
		o.List = state.FindSession
	}
	if o.Claim == nil {
		o.Claim = state.ClaimTold
	}
	if o.Alive == nil {
		o.Alive = procinfo.Alive
	}
	if o.Gone == nil {
		o.Gone = state.ReadGone
	}
}

// Run watches until ctx ends, the session's Claude Code is gone, or a
// line cannot be written (Claude Code closed the pipe).
func Run(ctx context.Context, o Options) error {
	o.defaults()
	w := newWatcher(o)
	var last time.Time
	tick := o.Tick
	if tick == nil {
		t := time.NewTicker(o.Poll)
		defer t.Stop()
		tick = t.C
	}
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return nil
			case <-tick:
			}
		}
		if o.ClaudePID > 0 && !o.Alive(o.ClaudePID) || PluginGone(o.PluginRoot, o.Exe) {
			return nil
		}
		now := o.Now()
		// A rename into the directory changes its time; one within the
		// last two seconds may hide another in the same tick of a
		// coarse clock, so the records are read again until it is older.
		mt := state.RecordsChanged()
		if !mt.Equal(last) || now.Sub(mt) < 2*time.Second || w.busy() || w.lost() {
			last = mt
			recs, err := o.List(o.Session, o.ClaudePID)
			if err != nil {
				continue
			}
			for _, line := range w.step(now, recs) {
				if _, err := io.WriteString(o.Out, line+"\n"); err != nil {
					return nil
				}
			}
		}
	}
}

// shim is what the monitor knows of one shim of the session.
type shim struct {
	server   string
	restarts int
	failed   bool // its failure was told (or it was failed when first seen and told)
	restart  bool // a restart not told yet
	// quiet: the record read last said the server is not answering. One
	// silence is told once, however its since moves (CPU time the shim
	// sees moves it); the next silence starts after a record without one.
	quiet bool
	rec   *state.Record
	alive time.Time // when its pid was last seen alive (lost)
}

// What a line waiting to be sent is about.
const (
	newsRestarted = iota
	newsFailing
	newsRecovered
	newsNotAnswering
	newsShimGone
)

// held is a line owed about a server: its news, and the shim (by key) and
// run (restarts) it is about. It is worded when sent, from that shim's
// newest record, and dropped if that record no longer says it: a line
// held back by the rate must not reach the model after the server
// answered, was restarted, or works again.
type held struct {
	news     int
	key      string
	restarts int
}

// watcher turns successive snapshots of the records into lines.
type watcher struct {
	o       Options
	shims   map[string]*shim       // by shim pid and start
	pending map[string]held        // by server: the line owed
	gone    map[string]*state.Gone // by shim key: a shim that died, while its line is owed
	lastAt  map[string]time.Time   // by server: when its last line was sent
	sent    []time.Time            // lines of the last minute
}

func newWatcher(o Options) *watcher {
	return &watcher{o: o, shims: map[string]*shim{}, pending: map[string]held{}, gone: map[string]*state.Gone{}, lastAt: map[string]time.Time{}}
}

// busy reports whether a line waits, or a restart waits to settle: the
// next poll reads the records whatever the directory says.
func (w *watcher) busy() bool {
	if len(w.pending) > 0 {
		return true
	}
	for _, s := range w.shims {
		if s.restart {
			return true
		}
	}
	return false
}

// lost reports whether a shim the watcher knows is gone: killed or
// crashed, it changed nothing in the records' directory (its record stays
// behind), so only its pid tells. One look a known shim a poll.
func (w *watcher) lost() bool {
	for _, s := range w.shims {
		if !w.o.Alive(s.rec.ShimPID) {
			return true
		}
		s.alive = w.o.Now()
	}
	return false
}

// step takes the session's records now and returns the lines to print.
func (w *watcher) step(now time.Time, recs []*state.Record) []string {
	live := map[string]bool{}
	for _, r := range recs {
		key := r.ShimStart + "/" + r.Started.String() + "/" + strconv.Itoa(r.ShimPID)
		live[key] = true
		s := w.shims[key]
		if s == nil {
			// First seen: what happened before is the news of a note
			// still owed (note_key), or of a failure.
			s = &shim{server: r.Server, restarts: r.Restarts, restart: r.NoteKey != ""}
			w.shims[key] = s
		}
		s.rec = r
		if r.Restarts > s.restarts {
			s.restarts, s.restart = r.Restarts, true
		}
		quiet := r.Quiet() != nil
		if quiet && !s.quiet {
			w.pending[r.Server] = held{newsNotAnswering, key, r.Restarts}
		}
		s.quiet = quiet
		switch {
		case r.State == state.Failed && !s.failed:
			s.failed, s.restart = true, false
			w.pending[r.Server] = held{newsFailing, key, r.Restarts}
		case r.State == state.Running && s.failed:
			s.failed, s.restart = false, false
			w.pending[r.Server] = held{newsRecovered, key, r.Restarts}
		case r.State == state.Running && s.restart && r.ChildPID > 0 && now.Sub(r.ChildStarted) >= w.o.Settle:
			s.restart = false
			if r.NoteKey == "" {
				// The model was told already (an error for the call
				// the server died under, or the note on a result).
				break
			}
			w.pending[r.Server] = held{newsRestarted, key, r.Restarts}
		}
	}
	for k, s := range w.shims {
		if live[k] {
			continue
		}
		delete(w.shims, k)
		// A shim that exits removes its record; one that left it was
		// killed or crashed, and whoever found it kept it as a Gone
		// (state.FindSession did, for this poll): Claude Code lost
		// the server with it.
		if g, err := w.o.Gone(s.rec.ShimPID); err == nil && g.ShimStart == s.rec.ShimStart && g.Started.Equal(s.rec.Started) {
			if s.alive.After(g.Updated) {
				// It was alive at the last poll: it died since, which
				// says more than its record's last write.
				c := *g
				c.Updated = s.alive
				g = &c
			}
			w.gone[k] = g
			w.pending[s.server] = held{newsShimGone, k, s.rec.Restarts}
		}
	}
	return w.flush(now)
}

// word is the line for h, from its shim's newest record, or "" when that
// record no longer says it (or the model heard of it another way).
func (w *watcher) word(h held) string {
	if h.news == newsShimGone {
		g := w.gone[h.key]
		delete(w.gone, h.key)
		for _, s := range w.shims {
			if g == nil || s.server == g.Server {
				return "" // a shim of it runs again (restarted, or reconnected)
			}
		}
		return health.MonitorShimGone(g)
	}
	s := w.shims[h.key]
	if s == nil {
		return "" // the shim is gone: the line would be about nothing
	}
	r := s.rec
	switch h.news {
	case newsNotAnswering:
		if r.Quiet() == nil || r.Restarts != h.restarts {
			return "" // it answered, or was restarted, since
		}
		return health.MonitorNotAnswering(r, w.o.Now())
	case newsFailing:
		if r.State != state.Failed {
			return ""
		}
		return health.MonitorFailing(r)
	case newsRecovered:
		if r.State != state.Running {
			return ""
		}
		w.claim(r.NoteKey)
		return health.MonitorRecovered(r)
	case newsRestarted:
		if r.State != state.Running || r.NoteKey == "" || !w.claim(r.NoteKey) {
			return "" // a result or a hook told it first
		}
		return health.MonitorRestarted(r)
	}
	return ""
}

// claim takes the restart note's told/ marker: true when this line is
// the one to tell the model of the restart.
func (w *watcher) claim(key string) bool {
	if key == "" {
		return true
	}
	won, err := w.o.Claim(key)
	return err == nil && won
}

// flush sends the lines the rate allows: one per server per Gap, Burst in
// any minute; the rest wait (a newer line about a server replaces the one
// waiting).
func (w *watcher) flush(now time.Time) []string {
	kept := w.sent[:0]
	for _, t := range w.sent {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	w.sent = kept
	var out []string
	for _, server := range slices.Sorted(maps.Keys(w.pending)) {
		if len(w.sent) >= w.o.Burst {
			break
		}
		if t, ok := w.lastAt[server]; ok && now.Sub(t) < w.o.Gap {
			continue
		}
		line := w.word(w.pending[server])
		delete(w.pending, server)
		if line == "" {
			continue
		}
		w.lastAt[server] = now
		w.sent = append(w.sent, now)
		out = append(out, line)
	}
	return out
}
