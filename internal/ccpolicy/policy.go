// Package ccpolicy is the one owner of Claude Code's MCP policy: for an
// entry of a name, whether Claude Code would run it in this session, and if
// not, why. It reads every source Claude Code merges for that (measured
// with Claude Code 2.1.328 and 2.1.332, docs/claude-code-behaviour.md):
// the managed files (managed-settings.json, its drop-ins in
// managed-settings.d, an exclusive managed-mcp.json), allowedMcpServers
// and deniedMcpServers in the managed, user, project and local settings,
// the project approval lists, and the folder's own trust record; and
// which entry of a name Claude Code runs when scopes repeat it
// (Shadowed). Options, made from the environment by FromEnv alone, says
// where the files are, and every file is read through its Reader. Every
// mcp-heal path that could start a server asks it first: hooks, doctor,
// heal, wrap, status and the shim, which links it, so it stays light (no
// net/http) and only reads.
package ccpolicy

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// Codes of a Decision.
const (
	Runs        = ""             // Claude Code runs the entry
	Denied      = "denied"       // deniedMcpServers matches the entry as written
	DeniedInner = "denied-inner" // a wrapped entry whose real server deniedMcpServers matches: the shim refuses it
	NotAllowed  = "not-allowed"  // allowedMcpServers is set and does not admit the entry as written
	ManagedOnly = "managed-only" // managed-mcp.json takes exclusive control
	Pending     = "pending"      // a .mcp.json server never approved, or the folder never trusted
	Rejected    = "rejected"     // a .mcp.json server in disabledMcpjsonServers
	NotOurs     = "not-ours"     // the session ran it from a source mcp-heal does not read
)

// Decision is whether Claude Code runs an entry (Code Runs) and if not,
// why, in words fit to print after "not run: ".
type Decision struct {
	Code string `json:"code"`
	Why  string `json:"why"`
}

// Approval of a project (.mcp.json) server.
const Approved = "approved"

// Entry is a server entry as written in its file: for a wrapped entry,
// the shim's command.
type Entry struct {
	Name    string
	Command string
	Args    []string
	URL     string // a remote server's; "" for stdio
}

func (e Entry) remote() bool { return e.Command == "" && e.URL != "" }

type rule struct {
	name    string
	command []string
	url     *urlPattern
	file    string // where it is written
}

func (r rule) matches(e Entry, names ...string) bool {
	switch {
	case r.name != "":
		for _, n := range append([]string{e.Name}, names...) {
			if n == r.name {
				return true
			}
		}
		return false
	case r.command != nil:
		return !e.remote() && e.Command == r.command[0] && slices.Equal(e.Args, r.command[1:])
	case r.url != nil:
		return e.remote() && r.url.matches(e.URL)
	}
	return false
}

func (r rule) kind() string {
	switch {
	case r.name != "":
		return "serverName"
	case r.command != nil:
		return "serverCommand"
	}
	return "serverUrl"
}

// Policy is Claude Code's MCP policy for one session, read once.
type Policy struct {
	exclusive string // managed-mcp.json, when present
	deny      []rule
	allow     []rule
	allowSet  bool           // some source sets allowedMcpServers (an empty list admits nothing)
	allowFrom string         // the files that set it, for the why
	settings  []gjson.Result // the user, project and local settings, highest precedence first

	// The project approval, read on first use (approval): it reads
	// ~/.claude.json, which can be large, and the shim never needs it.
	o        Options
	loaded   bool
	trusted  bool
	approval []gjson.Result // objects holding the approval lists, highest precedence first
}

// loadApproval reads the project's own record in ~/.claude.json, then
// the settings files. Trust is the folder's own record only: Claude Code
// 2.1.328 and 2.1.332 keep a repository under a trusted parent (~/code)
// pending.
func (p *Policy) loadApproval() {
	if p.loaded {
		return
	}
	p.loaded = true
	if data, ok := p.o.files().Config(p.o.GlobalConfigPath()); ok {
		projects := map[string]gjson.Result{}
		last(gjson.ParseBytes(data), "projects").ForEach(func(k, v gjson.Result) bool {
			projects[k.String()] = v
			return true
		})
		for _, k := range p.o.ProjectKeys() {
			if pr, ok := projects[k]; ok {
				if last(pr, "hasTrustDialogAccepted").Bool() {
					p.trusted = true
				}
				if len(p.approval) == 0 {
					p.approval = append(p.approval, pr)
				}
			}
		}
	}
	p.approval = append(p.approval, p.settings...)
}

// Load reads the policy for o, through o.Files.
func Load(o Options) *Policy {
	read := o.files().Config
	p := &Policy{}
	md := o.managedDir()
	if _, ok := read(filepath.Join(md, "managed-mcp.json")); ok {
		p.exclusive = filepath.Join(md, "managed-mcp.json")
	} else if st, err := o.files().Stat(filepath.Join(md, "managed-mcp.json")); err == nil && !st.IsDir() {
		// Present but unreadable or broken: Claude Code's exclusive
		// control is assumed, so that nothing is run in doubt.
		p.exclusive = filepath.Join(md, "managed-mcp.json")
	}
	managed := []string{filepath.Join(md, "managed-settings.json")}
	if des, err := o.files().ReadDir(filepath.Join(md, "managed-settings.d")); err == nil {
		var names []string
		for _, de := range des {
			if strings.HasSuffix(de.Name(), ".json") && !strings.HasPrefix(de.Name(), ".") {
				names = append(names, de.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			managed = append(managed, filepath.Join(md, "managed-settings.d", n))
		}
	}
	var user []string
	for _, d := range o.SettingsDirs() {
		user = append(user, filepath.Join(d, ".claude", "settings.local.json"), filepath.Join(d, ".claude", "settings.json"))
	}
	user = append(user, filepath.Join(o.ClaudeDir(), "settings.json"))

	managedOnly := false
	type src struct {
		file string
		obj  gjson.Result
	}
	var managedObjs, userObjs []src
	for _, f := range managed {
		if b, ok := read(f); ok {
			obj := gjson.ParseBytes(b)
			managedObjs = append(managedObjs, src{f, obj})
			if last(obj, "allowManagedMcpServersOnly").Type == gjson.True {
				managedOnly = true
			}
		}
	}
	for _, f := range user {
		if b, ok := read(f); ok {
			userObjs = append(userObjs, src{f, gjson.ParseBytes(b)})
		}
	}
	var from []string
	for _, s := range append(managedObjs, userObjs...) {
		p.deny = append(p.deny, rules(last(s.obj, "deniedMcpServers"), s.file, o.getenv())...)
	}
	allowSrc := append(managedObjs, userObjs...)
	if managedOnly {
		allowSrc = managedObjs
	}
	for _, s := range allowSrc {
		if v := last(s.obj, "allowedMcpServers"); v.IsArray() {
			p.allowSet = true
			from = append(from, s.file)
			p.allow = append(p.allow, rules(v, s.file, o.getenv())...)
		}
	}
	p.allowFrom = strings.Join(from, ", ")

	p.o = o
	for _, s := range userObjs {
		p.settings = append(p.settings, s.obj)
	}
	return p
}

// rules reads a deniedMcpServers or allowedMcpServers list. An entry must
// hold exactly one of serverName, serverCommand, serverUrl; others are
// skipped. A command's and a URL's ${VAR} are expanded, as Claude Code
// does.
func rules(v gjson.Result, file string, getenv func(string) string) []rule {
	var out []rule
	v.ForEach(func(_, e gjson.Result) bool {
		r := rule{file: file}
		n := 0
		if x := last(e, "serverName"); x.Type == gjson.String {
			r.name, n = x.Str, n+1
		}
		if x := last(e, "serverCommand"); x.IsArray() {
			var cmd []string
			ok := true
			x.ForEach(func(_, a gjson.Result) bool {
				ok = a.Type == gjson.String
				cmd = append(cmd, expandVars(a.Str, getenv))
				return ok
			})
			if ok && len(cmd) > 0 {
				r.command, n = cmd, n+1
			}
		}
		if x := last(e, "serverUrl"); x.Type == gjson.String {
			up := urlPattern(expandVars(x.Str, getenv))
			r.url, n = &up, n+1
		}
		if n == 1 {
			out = append(out, r)
		}
		return true
	})
	return out
}

// last is the value of the last member named key of object obj (JSON.parse
// keeps the last of duplicate keys).
func last(obj gjson.Result, key string) gjson.Result {
	var out gjson.Result
	if !obj.IsObject() {
		return out
	}
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.String() == key {
			out = v
		}
		return true
	})
	return out
}
