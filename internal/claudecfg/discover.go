package claudecfg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// GlobalConfigPath is ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json).
func (o Options) GlobalConfigPath() string {
	if o.ConfigDir != "" {
		return filepath.Join(o.ConfigDir, ".claude.json")
	}
	return filepath.Join(o.home(), ".claude.json")
}

func (o Options) configDir() string {
	if o.ConfigDir != "" {
		return o.ConfigDir
	}
	return filepath.Join(o.home(), ".claude")
}

func (o Options) home() string {
	if o.Home != "" {
		return o.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

func (o Options) projectDir() string {
	d := o.ProjectDir
	if d == "" {
		d, _ = os.Getwd()
	}
	if a, err := filepath.Abs(d); err == nil {
		d = a
	}
	// Claude Code runs in the resolved directory (getcwd).
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	return d
}

// settingsDirs are the directories whose .claude/settings*.json apply to
// the project: the project directory and its git root.
func (o Options) settingsDirs() []string {
	d := o.projectDir()
	if g := gitRoot(d); g != "" && g != d {
		return []string{d, g}
	}
	return []string{d}
}

// ProjectKeys are the keys under which ~/.claude.json "projects" may hold the
// project, most likely first. Claude Code keys local scope by the git root of
// its (symlink-resolved) working directory.
func (o Options) ProjectKeys() []string {
	d := o.ProjectDir
	if d == "" {
		d, _ = os.Getwd()
	}
	if a, err := filepath.Abs(d); err == nil {
		d = a
	}
	var keys []string
	add := func(k string) {
		for _, x := range keys {
			if x == k {
				return
			}
		}
		keys = append(keys, k)
	}
	real := d
	if r, err := filepath.EvalSymlinks(d); err == nil {
		real = r
	}
	if g := gitRoot(real); g != "" {
		add(g)
	}
	add(real)
	if g := gitRoot(d); g != "" {
		add(g)
	}
	add(d)
	return keys
}

func gitRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return ""
		}
		d = p
	}
}

// ConfigFile is one file that can hold MCP servers, and where in it.
type ConfigFile struct {
	Scope    string
	File     string
	JSONPath []string // path of the mcpServers object
}

// ConfigFiles lists the files Discover reads for scopes Claude Code lets a
// user edit (local, project, user), highest precedence first. The local
// entry names the project key found in ~/.claude.json (or the most likely
// one when the project is not there yet).
func ConfigFiles(o Options) []ConfigFile {
	return o.configFiles(func(f string) ([]byte, bool) {
		b, err := regfile.ReadConfig(f)
		return b, err == nil && jsoncheck.Valid(b) == nil
	})
}

func (o Options) configFiles(read func(string) ([]byte, bool)) []ConfigFile {
	global := o.GlobalConfigPath()
	keys := o.ProjectKeys()
	key := keys[0]
	if data, ok := read(global); ok {
		projects, _ := At(data, []string{"projects"})
		for _, k := range keys {
			if _, ok := LastMember(projects, k); ok {
				key = k
				break
			}
		}
	}
	out := []ConfigFile{{ScopeLocal, global, []string{"projects", key, "mcpServers"}}}
	// Claude Code reads .mcp.json in the working directory and every parent.
	for d := o.projectDir(); ; {
		out = append(out, ConfigFile{ScopeProject, filepath.Join(d, ".mcp.json"), []string{"mcpServers"}})
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	out = append(out, ConfigFile{ScopeUser, global, []string{"mcpServers"}})
	return out
}

// Discover returns every MCP server Claude Code would load for the project:
// local scope, project .mcp.json files (the nearest first), user scope, then
// servers of enabled plugins. A name defined again in a lower-precedence
// scope is returned with Shadowed set. Approval is part of it: a project
// server is returned with its Approval, and one the user has not approved
// (Server.Unapproved) shadows nothing, as in Claude Code, which drops it
// before it merges the scopes; the user's own entry of that name is the
// one loaded (Lookup, Server.Loaded). Files that cannot be read or parsed
// are skipped and reported in the error (a *SyntaxError names the
// position); the servers from the other files are still returned.
func Discover(o Options) ([]Server, error) {
	var out []Server
	var errs []error
	cache := map[string][]byte{}
	read := func(file string) ([]byte, bool) {
		if b, ok := cache[file]; ok {
			return b, b != nil
		}
		b, err := regfile.ReadConfig(file)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			cache[file] = nil
			return nil, false
		}
		if err := Check(file, b); err != nil {
			errs = append(errs, err)
			cache[file] = nil
			return nil, false
		}
		cache[file] = b
		return b, true
	}
	seen := map[string]bool{}
	var approval func(string) string // built on the first project server: it reads the whole "projects" object
	for _, cf := range o.configFiles(read) {
		data, ok := read(cf.File)
		if !ok {
			continue
		}
		obj, ok := At(data, cf.JSONPath)
		if !ok {
			continue
		}
		for _, s := range ParseServers(obj, cf) {
			if cf.Scope == ScopeProject || s.Protects != "" {
				if approval == nil {
					approval = o.approval(read)
				}
				// A local copy wrap made of a project server the user
				// rejected (or no longer approves) since is that server:
				// mcp-heal treats it as unapproved, and drift says to
				// unwrap it (Claude Code runs local entries unasked).
				if a := approval(s.Name); cf.Scope == ScopeProject || a != Approved {
					s.Approval = a
				}
			}
			s.Shadowed = seen[s.Name]
			if !s.Unapproved() {
				seen[s.Name] = true
			}
			out = append(out, s)
		}
	}
	for i, s := range out {
		if s.Protects != "" {
			out[i].Drift = drift(s, out)
		}
	}
	ps, err := pluginServers(o, read)
	if err != nil {
		errs = append(errs, err)
	}
	// Claude Code drops a plugin server whose command or URL a user's server
	// already has.
	for i := range ps {
		for _, s := range out {
			if s.Loaded() && sameTarget(s, ps[i]) {
				ps[i].Shadowed = true
			}
		}
	}
	out = append(out, ps...)
	return out, errors.Join(errs...)
}

func sameTarget(a, b Server) bool {
	if a.URL != "" || b.URL != "" {
		return a.URL == b.URL
	}
	return a.Command == b.Command && strings.Join(a.Args, "\x00") == strings.Join(b.Args, "\x00")
}

// ParseServers reads an mcpServers object. Duplicate keys: the last wins,
// as in JSON.parse.
func ParseServers(obj gjson.Result, cf ConfigFile) []Server {
	var out []Server
	idx := map[string]int{}
	for _, m := range Members(obj) {
		s := parseEntry(m.Key, m.Val)
		s.Scope, s.File, s.JSONPath = cf.Scope, cf.File, cf.JSONPath
		switch cf.Scope {
		case ScopeProject:
			s.hash = EntryHash(m.Val.Raw)
		case ScopeLocal:
			s.Protects, s.hash = CopyOf(m.Val)
		}
		if i, dup := idx[m.Key]; dup {
			out[i] = s
			continue
		}
		idx[m.Key] = len(out)
		out = append(out, s)
	}
	return out
}

// parseEntry reads one server entry, resolving a wrapped entry to the real
// server.
func parseEntry(name string, e gjson.Result) Server {
	s := Server{Name: name, Key: name}
	s.Command = LastVal(e, "command").String()
	s.Args, _ = StringArray(LastVal(e, "args"))
	s.Env, s.EnvKeys = StringMap(LastVal(e, "env"))
	s.URL = LastVal(e, "url").String()
	s.Headers, _ = StringMap(LastVal(e, "headers"))
	s.Transport = TransportOf(LastVal(e, "type").String(), s.Command, s.URL)
	if !IsShim(s.Command, s.Args) {
		return s
	}
	inv, ok := ParseShimArgs(s.Args)
	if !ok {
		return s
	}
	s.Wrapped, s.Shim = true, s.Command
	if inv.URL == "" {
		s.Command, s.Args = inv.Command, inv.Args
		s.Transport = "stdio"
		return s
	}
	s.Command, s.Args, s.URL = "", nil, inv.URL
	if v, name, ok := FromEnv(inv.URL, s.Env, URLEnvName); ok {
		s.URL = v
		delete(s.Env, name)
	}
	s.Transport = inv.Transport
	if orig := LastVal(LastVal(e, MarkerKey), "original"); orig.IsObject() {
		s.Transport = TransportOf(LastVal(orig, "type").String(), "", inv.URL)
	} else if s.Transport == "" || s.Transport == "auto" {
		s.Transport = "http"
	}
	// Header values live in the entry's env; they are not the user's env.
	s.Headers = nil
	if len(inv.Headers) > 0 {
		s.Headers = map[string]string{}
	}
	var keys []string
	for _, k := range s.EnvKeys {
		if !strings.HasPrefix(k, HeaderEnvPrefix) && !strings.HasPrefix(k, URLEnvName) {
			keys = append(keys, k)
		}
	}
	for _, h := range inv.Headers {
		k, v := SplitHeader(h)
		if m := EnvRef().FindStringSubmatch(v); m != nil {
			if ev, ok := s.Env[m[1]]; ok {
				v = ev
				delete(s.Env, m[1])
			}
		}
		s.Headers[k] = v
	}
	s.EnvKeys = keys
	return s
}

// LastVal is the value of the last member named key of object e.
func LastVal(e gjson.Result, key string) gjson.Result {
	m, _ := LastMember(e, key)
	return m.Val
}

func TransportOf(typ, command, url string) string {
	switch {
	case typ != "":
		return typ
	case command != "":
		return "stdio"
	case url != "":
		return "http"
	}
	return "stdio"
}
