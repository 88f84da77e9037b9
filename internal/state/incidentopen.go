package state

import (
	"time"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// IncidentWindow is how long an incident stays open when nothing closes it
// earlier: status shows it, the hooks warn about its server.
const IncidentWindow = time.Hour

// ClassOK is the class of the incident that closes a server's earlier
// ones: a later call of the session went through (internal/health names
// it health.OK; the vocabulary lives there).
const ClassOK = "ok"

// This file is the one owner of "is this incident open". The hooks (to
// warn before a call, to close an incident and to clear the attention
// marker), status, doctor and heal all ask it; none re-states the rule.
//
// An incident belongs to a session. It is open while it is its session's
// latest incident of its server, is not an ok, is younger than
// IncidentWindow, was not answered by a later call of that session
// (CalledDir) and its session's Claude Code still runs (SessionEnded).

// Answered returns when a call of in's session to its server started after
// in, if one did: the PreToolUse hook records an ok at the next call, but
// a reader need not wait for one.
func Answered(in *Incident) (time.Time, bool) {
	if in == nil || in.Class == ClassOK {
		return time.Time{}, false
	}
	at, ok := CalledAt(in.Session, in.Server)
	return at, ok && at.After(in.Time)
}

// SessionEnded reports whether the Claude Code process of in's session is
// known to be gone: the session is over, and what it saw no longer holds
// for anyone (a new session starts every server afresh).
func SessionEnded(in *Incident) bool {
	return in != nil && in.ClaudePID > 0 && !procinfo.Alive(in.ClaudePID)
}

// IsOpen reports whether in leaves its server failing in its session at
// now.
func IsOpen(in *Incident, now time.Time) bool {
	if !Continues(in, now) {
		return false
	}
	_, answered := Answered(in)
	return !answered
}

// ClosedByCall returns when a later call of in's session started, if that
// call is all that closes in (in is otherwise open): the PreToolUse hook
// then records the ok.
func ClosedByCall(in *Incident, now time.Time) (time.Time, bool) {
	if !Continues(in, now) {
		return time.Time{}, false
	}
	return Answered(in)
}

// SameSession reports whether an incident recorded in session a belongs
// to session b; either side not knowing its session matches any.
func SameSession(a, b string) bool { return a == "" || b == "" || a == b }

// LatestIncident returns the newest incident of server in log (oldest
// first) that belongs to session (SameSession), or nil.
func LatestIncident(log []Incident, server, session string) *Incident {
	for i := len(log) - 1; i >= 0; i-- {
		if in := &log[i]; in.Server == server && SameSession(in.Session, session) {
			return in
		}
	}
	return nil
}

// OpenIncidents returns the incidents of server still open at now, oldest
// first, one per session at most (its latest), from log (oldest first).
// session narrows it to that session's (SameSession); "" means every
// session.
func OpenIncidents(log []Incident, server, session string, now time.Time) []Incident {
	latest := map[string]int{}
	for i, in := range log {
		if in.Server == server {
			latest[in.Session] = i
		}
	}
	var out []Incident
	for i := range log {
		in := &log[i]
		if in.Server == server && latest[in.Session] == i && SameSession(in.Session, session) && IsOpen(in, now) {
			out = append(out, *in)
		}
	}
	return out
}

// Continues reports whether a new failure of prev's server in prev's
// session continues prev's run of failures: prev is a failure (not an
// ok) within IncidentWindow of a session still running. Unlike IsOpen it
// ignores the call mark: the call that failed now is the one that marked.
func Continues(prev *Incident, now time.Time) bool {
	return prev != nil && prev.Class != ClassOK && now.Sub(prev.Time) <= IncidentWindow && !SessionEnded(prev)
}
