package wrap

import (
	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// refuse splits the entries sel of cf (in data) into those wrap leaves
// alone for Claude Code's policy, as skipped rows saying why in one line,
// and the rest. Wrap never changes what Claude Code runs or blocks: an
// entry the policy blocks as it is stays as it is (wrapped, a deny rule by
// command or URL would no longer match it), and so does one whose wrapped
// form the policy would refuse (an allowlist of commands that does not
// list mcp-heal's).
func (pl *planner) refuse(data []byte, cf claudecfg.ConfigFile, sel []string) (rows []Change, rest []string) {
	obj, ok := claudecfg.At(data, cf.JSONPath)
	if !ok || pl.pol == nil {
		return nil, sel
	}
	written := claudecfg.Written(obj)
	for _, n := range sel {
		e := written[n]
		if claudecfg.IsShim(e.Command, e.Args) {
			rest = append(rest, n) // already wrapped: Wrap says so
			continue
		}
		if why := pl.twin(cf, n); why != "" {
			rows = append(rows, Change{Name: n, Action: ActSkipped, Detail: "left alone: " + why})
			continue
		}
		if pl.pol.Empty() {
			rest = append(rest, n)
			continue
		}
		if d := pl.pol.Decide(e); d.Code != ccpolicy.Runs {
			rows = append(rows, Change{Name: n, Action: ActSkipped, Detail: "left alone: Claude Code's policy blocks it (" + d.Why + ")"})
			continue
		}
		if w, _, err := Wrap(data, cf.JSONPath, []string{n}, pl.r.Shim, pl.r.Flags...); err == nil {
			if wobj, ok := claudecfg.At(w, cf.JSONPath); ok {
				we := claudecfg.Written(wobj)[n]
				if why := pl.pol.Wraps(n, &we); why != "" {
					rows = append(rows, Change{Name: n, Action: ActSkipped, Detail: "left alone: " + why})
					continue
				}
			}
		}
		rest = append(rest, n)
	}
	return rows, rest
}

// twin is why wrap leaves entry n of cf alone because a plugin's server
// runs the same server (ccpolicy.Twin), "" when none does.
func (pl *planner) twin(cf claudecfg.ConfigFile, n string) string {
	for _, s := range pl.servers {
		if s.File == cf.File && s.Scope == cf.Scope && s.Key == n && s.Twin != "" {
			return ccpolicy.TwinWhy(s.Twin)
		}
	}
	return ""
}
