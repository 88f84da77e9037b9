package ccpolicy

import "strings"

// Merged is one entry as Claude Code merges the scopes for a session,
// for Shadowed: the local, project (nearest .mcp.json first) and user
// entries, highest precedence first, then the plugins' servers.
type Merged struct {
	Name string
	// Target is the server the entry runs: a plugin's server whose target
	// an entry Claude Code loads has is dropped, whatever its name.
	Target Entry
	Plugin bool
	// Unapproved: a project server the user has not approved. Claude Code
	// drops it before it merges the scopes: it takes no name.
	Unapproved bool
	// Blocked: the policy keeps it from running (Decide). It still takes
	// its name (measured: a denied local entry leaves the user's entry of
	// that name unrun), but it loads nothing a plugin's server could
	// duplicate.
	Blocked bool
}

// Shadowed says, for each of es, whether Claude Code leaves it unrun
// because another entry takes its place: an entry whose name a
// higher-precedence entry (approved, or needing no approval) already
// took, or a plugin's server whose command and arguments, or URL, an
// entry it loads already has.
func Shadowed(es []Merged) []bool {
	out := make([]bool, len(es))
	taken := map[string]bool{}
	for i, e := range es {
		if e.Plugin {
			continue
		}
		out[i] = taken[e.Name]
		if !e.Unapproved {
			taken[e.Name] = true
		}
	}
	for i, p := range es {
		if !p.Plugin {
			continue
		}
		for j, e := range es {
			if !e.Plugin && !out[j] && !e.Unapproved && !e.Blocked && sameTarget(e.Target, p.Target) {
				out[i] = true
			}
		}
	}
	return out
}

// Twin names the plugin's server among es that entry i (not a plugin's)
// keeps from running by having its target ("" when none): Claude Code
// drops that server only while entry i runs the same command, as
// written. Wrapped, entry i would run the shim, and both would run: wrap
// leaves such an entry alone (TwinWhy).
func Twin(es []Merged, i int) string {
	e := es[i]
	if e.Plugin || e.Unapproved || e.Blocked || e.Target.Command == "" && e.Target.URL == "" {
		return ""
	}
	for _, p := range es {
		if p.Plugin && !p.Blocked && sameTarget(e.Target, p.Target) {
			return p.Name
		}
	}
	return ""
}

// TwinWhy is why wrap leaves alone an entry whose target the plugin's
// server twin has.
func TwinWhy(twin string) string {
	return "the plugin server " + twin + " runs the same server; Claude Code drops it only while this entry runs that command itself, so wrapped, both would run"
}

func sameTarget(a, b Entry) bool {
	if a.URL != "" || b.URL != "" {
		return a.URL == b.URL
	}
	return a.Command == b.Command && strings.Join(a.Args, "\x00") == strings.Join(b.Args, "\x00")
}
