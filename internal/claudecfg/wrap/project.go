package wrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// A project's .mcp.json is usually committed and shared: pointing its
// entries at a binary in one person's HOME breaks them for the team. So by
// default wrap protects a project server with a local-scope entry of the
// same name (~/.claude.json "projects"[<project>]["mcpServers"]), which
// Claude Code prefers over .mcp.json (local > project > user precedence),
// holding the wrapped copy, and leaves .mcp.json alone. The copy's marker
// names the .mcp.json file and a hash of the entry it copies, so a change
// to .mcp.json (a teammate's new argument) is noticed (Server.Drift) and
// wrap refreshes the copy.

// What wrap does with project (.mcp.json) servers.
const (
	ProjectLocal   = "local"   // protect them with a local entry (default)
	ProjectSkip    = "skip"    // leave them alone
	ProjectRewrite = "rewrite" // rewrite .mcp.json itself
)

// protectEntry is the local entry that stands in for project entry e of
// file: e wrapped, on one line, its marker naming file and e's hash.
func protectEntry(name string, e gjson.Result, shimPath, file string, flags ...string) (string, Change) {
	text, ch := wrapEntry(name, e, shimPath, flags...)
	if ch.Action != ActWrapped {
		if ch.Action != ActSkipped {
			// Wrapped in .mcp.json itself (--project-servers rewrite
			// earlier): nothing to protect, and .mcp.json is not touched.
			ch.Action, ch.Detail = ActAlreadyWrapped, "in "+filepath.Base(file)+" itself"
		}
		return "", ch
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		return "", Change{Name: name, Action: ActSkipped, Detail: err.Error()}
	}
	mark := fmt.Sprintf(`{"file":%s,"sha256":%q}`, claudecfg.JSONString(file), claudecfg.EntryHash(e.Raw))
	out, err := sjson.SetRaw(buf.String(), claudecfg.MarkerKey+"."+claudecfg.ProjectMarker, mark)
	if err != nil {
		return "", Change{Name: name, Action: ActSkipped, Detail: err.Error()}
	}
	ch.Detail = joinDetail("by a local entry of the same name, which Claude Code prefers; "+filepath.Base(file)+" is not changed", ch.Detail)
	return out, ch
}

// isCopy says whether the local entry name is a copy protecting a project
// server.
func isCopy(data []byte, cf claudecfg.ConfigFile, name string) bool {
	obj, _ := claudecfg.At(data, cf.JSONPath)
	m, ok := claudecfg.LastMember(obj, name)
	if !ok {
		return false
	}
	f, _ := claudecfg.CopyOf(m.Val)
	return f != ""
}

// protect makes or refreshes, in the local scope (ge, local), the copies
// that protect the project servers sel of fe.
func protect(ge *fileEdit, local claudecfg.ConfigFile, fe *fileEdit, cf claudecfg.ConfigFile, sel []string, r Request, oauth map[string]bool, servers []claudecfg.Server) ([]Change, error) {
	obj, _ := claudecfg.At(fe.new, cf.JSONPath)
	var out []Change
	for _, n := range sel {
		m, _ := claudecfg.LastMember(obj, n)
		lobj, _ := claudecfg.At(ge.new, local.JSONPath)
		cur, hasLocal := claudecfg.LastMember(lobj, n)
		file, hash := "", ""
		if hasLocal {
			file, hash = claudecfg.CopyOf(cur.Val)
		}
		switch {
		case oauth[n]:
			out = append(out, Change{Name: n, Action: ActSkipped, Detail: "signs in with OAuth, which only Claude Code can do"})
			continue
		case hasLocal && file == "":
			out = append(out, Change{Name: n, Action: ActSkipped, Detail: "wrap the local entry of the same name: it takes precedence over this one"})
			continue
		case unapproved(servers, cf.File, n) != "":
			// A local copy would load a server the user has not approved.
			out = append(out, Change{Name: n, Action: ActSkipped, Detail: "approve it, then wrap it: not approved in Claude Code (" + unapproved(servers, cf.File, n) + ")"})
			continue
		}
		text, ch := protectEntry(n, m.Val, r.Shim, cf.File, r.Flags...)
		if !ch.Changed() {
			out = append(out, ch)
			continue
		}
		if hasLocal {
			if hash == claudecfg.EntryHash(m.Val.Raw) && claudecfg.EntryHash(cur.Val.Raw) == claudecfg.EntryHash(text) {
				out = append(out, Change{Name: n, Action: ActAlreadyWrapped, Detail: "by a local entry of the same name"})
				continue
			}
			if hash == claudecfg.EntryHash(m.Val.Raw) && keepOf(r.Flags) != "" {
				// The copy is of .mcp.json as it is: only --keep changed.
				ch.Action, ch.Detail = ActKeepSet, keptWords(r.Flags)+"; set in the local entry that protects it"
			} else {
				ch.Action, ch.Detail = ActRefreshed, joinDetail("the local entry that protects it now copies "+filepath.Base(cf.File)+" as it is", keptWords(r.Flags))
			}
		}
		path := make([]string, 0, len(local.JSONPath)+1)
		for _, k := range append(append(path, local.JSONPath...), n) {
			path = append(path, gjson.Escape(k))
		}
		b, err := sjson.SetRawBytes(ge.new, strings.Join(path, "."), []byte(text))
		if err != nil {
			return nil, err
		}
		ge.new = b
		out = append(out, ch)
	}
	return out, nil
}

// unwrapLocal removes the copies protecting project servers and unwraps
// the other local entries in sel.
func (p *Plan) unwrapLocal(fe *fileEdit, cf claudecfg.ConfigFile, sel []string) ([]Change, error) {
	var rest []string
	var rows []Change
	for _, n := range sel {
		if !isCopy(fe.new, cf, n) {
			rest = append(rest, n)
			continue
		}
		path := make([]string, 0, len(cf.JSONPath)+1)
		for _, k := range append(append([]string{}, cf.JSONPath...), n) {
			path = append(path, gjson.Escape(k))
		}
		b, err := sjson.DeleteBytes(fe.new, strings.Join(path, "."))
		if err != nil {
			return nil, err
		}
		fe.new = b
		rows = append(rows, Change{Name: n, Action: ActUnwrapped, Detail: "removed the local entry that protected the project server; Claude Code uses .mcp.json's again"})
	}
	if len(rest) == 0 {
		return rows, nil
	}
	b, more, err := Unwrap(fe.new, cf.JSONPath, rest)
	if err != nil {
		return nil, err
	}
	fe.new = b
	return append(rows, more...), nil
}

// unwrapCopies removes the local copies that protect the project servers
// sel of file, and says so in rows (replacing their "not wrapped" rows).
func (p *Plan) unwrapCopies(edit func(string) (*fileEdit, error), local claudecfg.ConfigFile, file string, sel []string, rows []Change) ([]Change, error) {
	ge, err := edit(local.File)
	if err != nil || ge == nil {
		return rows, err
	}
	var copies []string
	for _, n := range sel {
		obj, _ := claudecfg.At(ge.new, local.JSONPath)
		if m, ok := claudecfg.LastMember(obj, n); ok {
			if f, _ := claudecfg.CopyOf(m.Val); f == file {
				copies = append(copies, n)
			}
		}
	}
	if len(copies) == 0 {
		return rows, nil
	}
	removed, err := p.unwrapLocal(ge, local, copies)
	if err != nil {
		return nil, err
	}
	out := removed
	for _, r := range rows {
		if !slices.Contains(copies, r.Name) || r.Changed() {
			out = append(out, r)
		}
	}
	return out, nil
}
