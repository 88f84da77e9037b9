// Package wrap rewrites Claude Code's config so that it launches MCP
// servers through `mcp-heal shim` (wrap) or back (unwrap): pure transforms
// on a file's bytes (every other byte kept), a plan over every scope (the
// project servers, OAuth, approval), its diff, and its commit through
// internal/cfgfile, planning again when another program wrote meanwhile. It
// reads the servers with claudecfg; only `mcp-heal wrap` and `unwrap` use it.
package wrap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/cfgfile"
	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/redact"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
	"github.com/mcp-heal/mcp-heal/internal/text"
)

// Request is what wrap or unwrap is asked to do.
type Request struct {
	Unwrap bool
	Names  []string // the servers named; nil: every server
	Scope  string   // "all", ScopeLocal, ScopeProject or ScopeUser
	Shim   string   // wrap: absolute path of the mcp-heal binary entries run
	// Flags are extra shim flags for stdio entries (e.g. --keep DURATION).
	Flags []string
	// Project is what wrap does with project (.mcp.json) servers:
	// ProjectLocal (the default when empty), ProjectSkip or ProjectRewrite.
	Project string
}

// Row is what was (or would be) done to one entry.
type Row struct {
	Change
	Scope string `json:"scope"`
	File  string `json:"file"`
	// edit is the file the change is written to (File, or ~/.claude.json
	// for a project server's local copy); src is the entry as the plan
	// read it from File. Commit plans again the rows whose edit file it
	// has not written, and says so where src changed (replan.go).
	edit, src string
}

// Plan is every edit a Request makes, computed from the files as read and
// not yet written: a dry run prints it, Commit writes it.
type Plan struct {
	Rows []Row
	// Missing are the names asked for that no entry in scope has.
	Missing []string
	files   []*fileEdit
	o       claudecfg.Options // what the plan was made from, for Commit to plan again
	r       Request
}

type fileEdit struct {
	path     string
	old, new []byte
	written  bool // by Commit
}

// Backup is where Commit saved a file's previous contents.
type Backup struct{ File, Backup string }

// NewPlan reads and checks every config file in scope, then computes the
// edits. Nothing is written; a file that is not valid JSON fails the whole
// plan.
func NewPlan(o claudecfg.Options, r Request) (*Plan, error) {
	return newPlan(o, r, nil, regfile.ReadConfig)
}

// entryKey names one server entry of a scope: what a Row is about.
type entryKey struct{ scope, name string }

// newPlan is NewPlan reading the files with read; when only is not nil,
// the entries it holds are the only ones planned (Commit's re-plan: the
// same servers, no others).
func newPlan(o claudecfg.Options, r Request, only map[entryKey]bool, read func(string) ([]byte, error)) (*Plan, error) {
	if r.Scope == "" {
		r.Scope = "all"
	}
	if r.Project == "" {
		r.Project = ProjectLocal
	}
	pl := &planner{p: &Plan{o: o, r: r}, r: r, read: read, byPath: map[string]*fileEdit{}}
	files := claudecfg.ConfigFiles(o)
	pl.local = files[0] // ConfigFiles lists the local scope first
	if !r.Unwrap {
		pl.oauth = claudecfg.OAuthServers(o)
		pl.servers, _ = claudecfg.Discover(o) // for the approval of project servers
		pl.pol = ccpolicy.Load(o)
	}
	for _, cf := range files {
		if r.Scope != "all" && cf.Scope != r.Scope {
			continue
		}
		if err := pl.plan(cf, only); err != nil {
			return nil, err
		}
	}
	pl.p.Missing = pl.missing(files)
	return pl.p, nil
}

// planner is one newPlan under way: the files read so far (each once,
// whichever scope's pass reads it first) and what every pass consults.
type planner struct {
	p       *Plan
	r       Request
	read    func(string) ([]byte, error)
	byPath  map[string]*fileEdit
	local   claudecfg.ConfigFile // ~/.claude.json's local scope, where copies go
	oauth   map[string]bool      // wrap: the servers that sign in with OAuth
	servers []claudecfg.Server   // wrap: for the approval of project servers
	pol     *ccpolicy.Policy     // wrap: Claude Code's policy, which wrap must not change
}

// edit is the plan's edit of path, read and checked on first use (nil
// when path does not exist).
func (pl *planner) edit(path string) (*fileEdit, error) {
	if fe := pl.byPath[path]; fe != nil {
		return fe, nil
	}
	data, err := pl.read(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := claudecfg.Check(path, data); err != nil {
		return nil, fmt.Errorf("%w (nothing was changed)", err)
	}
	fe := &fileEdit{path: path, old: data, new: data}
	pl.byPath[path] = fe
	pl.p.files = append(pl.p.files, fe)
	return fe, nil
}

// plan adds the rows of config file cf's entries (those in only, when it
// is not nil) and edits the files they are written to.
func (pl *planner) plan(cf claudecfg.ConfigFile, only map[entryKey]bool) error {
	fe, err := pl.edit(cf.File)
	if err != nil || fe == nil {
		return err
	}
	sel := EntryNames(fe.new, cf.JSONPath, pl.r.Names)
	if only != nil {
		sel = slices.DeleteFunc(sel, func(n string) bool { return !only[entryKey{cf.Scope, n}] })
	}
	if len(sel) == 0 {
		return nil
	}
	var refused []Change
	if !pl.r.Unwrap && !(cf.Scope == claudecfg.ScopeProject && pl.r.Project == ProjectSkip) {
		refused, sel = pl.refuse(fe.new, cf, sel)
	}
	rows, to, own, err := pl.changes(fe, cf, sel)
	rows = append(refused, rows...)
	if err != nil {
		return fmt.Errorf("%s: %w", cf.File, err)
	}
	for _, c := range rows {
		row := Row{c, cf.Scope, cf.File, to, entryRaw(fe.old, cf.JSONPath, c.Name)}
		if own != nil && !slices.Contains(own, c) {
			row.edit = pl.local.File // a local copy unwrapCopies removed
		}
		pl.p.Rows = append(pl.p.Rows, row)
	}
	return nil
}

// changes edits the entries sel of cf (read into fe) as the request says.
// to is the file the rows' changes are written to; own, Unwrap's rows when
// unwrapCopies adds rows for copies in the local file.
func (pl *planner) changes(fe *fileEdit, cf claudecfg.ConfigFile, sel []string) (rows []Change, to string, own []Change, err error) {
	r, p, to := pl.r, pl.p, cf.File
	switch {
	case r.Unwrap && cf.Scope == claudecfg.ScopeLocal:
		rows, err = p.unwrapLocal(fe, cf, sel)
	case r.Unwrap:
		fe.new, rows, err = Unwrap(fe.new, cf.JSONPath, sel)
		if err == nil && cf.Scope == claudecfg.ScopeProject && r.Scope == claudecfg.ScopeProject {
			// --scope project: the local copies that protect these
			// servers go too (with every scope, the local pass does it).
			own = rows
			rows, err = p.unwrapCopies(pl.edit, pl.local, cf.File, sel, rows)
		}
	case cf.Scope == claudecfg.ScopeProject && r.Project == ProjectSkip:
		for _, n := range sel {
			rows = append(rows, Change{Name: n, Action: ActSkipped, Detail: "a project server, shared through " + filepath.Base(cf.File) + ": left alone"})
		}
	case cf.Scope == claudecfg.ScopeProject && r.Project == ProjectLocal:
		var ge *fileEdit
		if ge, err = pl.edit(pl.local.File); err == nil && ge == nil {
			// No ~/.claude.json yet: start one.
			ge = &fileEdit{path: pl.local.File, new: []byte("{}\n")}
			pl.byPath[pl.local.File] = ge
			p.files = append(p.files, ge)
		}
		if err == nil {
			rows, err = protect(ge, pl.local, fe, cf, sel, r, pl.oauth, pl.servers)
			to = pl.local.File
		}
	default:
		rows, err = pl.wrapInPlace(fe, cf, sel)
	}
	return rows, to, own, err
}

// wrapInPlace wraps the entries sel of cf in cf itself, skipping those
// wrap must not touch.
func (pl *planner) wrapInPlace(fe *fileEdit, cf claudecfg.ConfigFile, sel []string) ([]Change, error) {
	var rows []Change
	var keep []string
	for _, n := range sel {
		switch {
		case pl.oauth[n]:
			rows = append(rows, Change{Name: n, Action: ActSkipped, Detail: "signs in with OAuth, which only Claude Code can do"})
		case cf.Scope == claudecfg.ScopeProject && unapproved(pl.servers, cf.File, n) != "":
			// --project-servers rewrite: a server the user has
			// not approved is not ours to change either.
			rows = append(rows, Change{Name: n, Action: ActSkipped, Detail: "approve it, then wrap it: not approved in Claude Code (" + unapproved(pl.servers, cf.File, n) + ")"})
		case cf.Scope == claudecfg.ScopeLocal && isCopy(fe.new, cf, n):
			// A copy protecting a project server: the project
			// scope's pass reports and refreshes it.
		default:
			keep = append(keep, n)
		}
	}
	if len(keep) == 0 {
		return rows, nil
	}
	var more []Change
	var err error
	fe.new, more, err = Wrap(fe.new, cf.JSONPath, keep, pl.r.Shim, pl.r.Flags...)
	return append(rows, more...), err
}

// missing are the names asked for that no entry in scope has.
func (pl *planner) missing(files []claudecfg.ConfigFile) []string {
	found := map[string]bool{}
	for _, row := range pl.p.Rows {
		found[row.Name] = true
	}
	for _, f := range files {
		if pl.r.Scope != "all" && f.Scope != pl.r.Scope {
			continue
		}
		if fe := pl.byPath[f.File]; fe != nil {
			for _, n := range EntryNames(fe.old, f.JSONPath, pl.r.Names) {
				found[n] = true
			}
		}
	}
	var out []string
	for _, n := range pl.r.Names {
		if !found[n] {
			out = append(out, n)
		}
	}
	return out
}

// Changed says whether the plan changes any file.
func (p *Plan) Changed() bool {
	for _, fe := range p.files {
		if string(fe.old) != string(fe.new) {
			return true
		}
	}
	return false
}

// Diff is a unified diff of every file the plan changes; name labels a
// file (e.g. with ~ for the home directory).
func (p *Plan) Diff(name func(string) string) string {
	var b strings.Builder
	for _, fe := range p.files {
		if string(fe.old) != string(fe.new) {
			// Env and header values and URL tokens never reach the output:
			// through /mcp-heal wrap --dry-run it lands in the model's
			// context (redact.JSON, the one rule). A server's name in
			// it may hold line separators, bidi controls or escapes
			// (a file may be invalid JSON): each line goes through
			// text.Safe, tabs kept for the file's indent.
			b.WriteString(safeLines(Diff(name(fe.path), redact.JSON(fe.old), redact.JSON(fe.new))))
		}
	}
	return b.String()
}

// safeLines is s, lines of a diff, each through text.Safe but for tabs.
func safeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = text.Safe(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// writeNew creates path (0600) whole: written to a temporary file, then
// linked into place, which fails if path exists by now.
func writeNew(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".mcp-heal-new-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, path); errors.Is(err, os.ErrExist) {
		// Another program created it since the plan found none.
		return fmt.Errorf("%s: %w", path, cfgfile.ErrChanged)
	} else if err != nil {
		return err
	}
	return nil
}

// Notes are what a person should know about the plan besides its rows:
// shim names the binary entries run, status the command that shows drift.
func (p *Plan) Notes(r Request, shim, status string) []string {
	var rewritten, copied, skipped bool
	for _, row := range p.Rows {
		if row.Scope != claudecfg.ScopeProject || r.Unwrap {
			continue
		}
		switch {
		case r.Project == ProjectRewrite && row.Changed():
			rewritten = true
		case (r.Project == ProjectLocal || r.Project == "") && row.Changed():
			copied = true
		case r.Project == ProjectSkip:
			skipped = true
		}
	}
	var out []string
	if rewritten {
		out = append(out, "keep .mcp.json out of commits, or use --project-servers local: it is usually shared through version control, and its wrapped entries run "+shim+", which teammates may not have.")
	}
	if copied {
		out = append(out, "keep both entries when /mcp warns \"[Conflicting scopes]\": project servers are protected by local entries of the same name in ~/.claude.json, and .mcp.json is not changed ('claude mcp list' and /mcp then warn \"[Conflicting scopes] ... remove the others\" for them, as expected; removing the project one edits the team's file, removing the local one drops the protection). When .mcp.json changes, '"+status+"' says so: wrap them again.")
	}
	if skipped {
		out = append(out, "protect project (.mcp.json) servers with --project-servers local: they were left alone (it adds a local entry; .mcp.json stays unchanged).")
	}
	return out
}

// unapproved is the approval (Pending or Rejected) of project server name
// of file when the user has not approved it, else "".
func unapproved(servers []claudecfg.Server, file, name string) string {
	for _, s := range servers {
		if s.Scope == claudecfg.ScopeProject && s.File == file && s.Key == name && s.Unapproved() {
			return s.Approval
		}
	}
	return ""
}
