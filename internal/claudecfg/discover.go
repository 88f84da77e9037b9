package claudecfg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

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
	return configFiles(o, ccpolicy.OS.Config)
}

func configFiles(o Options, read func(string) ([]byte, bool)) []ConfigFile {
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
	for d := o.Dir(); ; {
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
	o.Files = ccpolicy.ConfigReader(read)
	var targets []ccpolicy.Entry // each server as written, what Claude Code compares
	pol := ccpolicy.Load(o)
	for _, cf := range configFiles(o, read) {
		data, ok := read(cf.File)
		if !ok {
			continue
		}
		obj, ok := At(data, cf.JSONPath)
		if !ok {
			continue
		}
		written := Written(obj)
		for _, s := range ParseServers(obj, cf) {
			if cf.Scope == ScopeProject || s.Protects != "" {
				// A local copy wrap made of a project server the user
				// rejected (or no longer approves) since is that server:
				// mcp-heal treats it as unapproved, and drift says to
				// unwrap it (Claude Code runs local entries unasked).
				if a := pol.Approval(s.Name); cf.Scope == ScopeProject || a != Approved {
					s.Approval = a
				}
			}
			s.Policy = decide(pol, s, written[s.Key])
			if !s.Wrapped && s.Policy == nil {
				s.NoWrap = pol.Wraps(s.Name, nil)
			}
			out = append(out, s)
			targets = append(targets, written[s.Key])
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
	for i := range ps {
		// A serverName rule names a plugin's server by its full name
		// (plugin:<plugin>:<server>), never its short one (measured).
		w := ccpolicy.Entry{Name: ps[i].Name, Command: ps[i].Command, Args: ps[i].Args, URL: ps[i].URL}
		ps[i].Policy = decide(pol, ps[i], w)
		targets = append(targets, w)
	}
	out = append(out, ps...)
	// Claude Code compares entries as written: a wrapped entry's is the
	// shim's command.
	merged := make([]ccpolicy.Merged, len(out))
	for i, s := range out {
		merged[i] = ccpolicy.Merged{Name: s.Name, Target: targets[i], Plugin: s.Scope == ScopePlugin, Unapproved: s.Unapproved(), Blocked: s.Policy != nil}
	}
	for i, sh := range ccpolicy.Shadowed(merged) {
		out[i].Shadowed = sh
		if out[i].Wrapped {
			continue
		}
		if out[i].Twin = ccpolicy.Twin(merged, i); out[i].Twin != "" && out[i].NoWrap == "" {
			out[i].NoWrap = ccpolicy.TwinWhy(out[i].Twin)
		}
	}
	return out, errors.Join(errs...)
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

// decide is what Claude Code's policy says of s (nil: it runs, as far as
// the policy goes). A wrapped entry is judged as written (the shim's
// command, what Claude Code matches) and by its real server too, which the
// shim refuses to start when a deny rule matches it (an entry wrapped
// before the rule was written).
func decide(pol *ccpolicy.Policy, s Server, written ccpolicy.Entry, names ...string) *ccpolicy.Decision {
	if d := pol.Decide(written, names...); d.Code != ccpolicy.Runs {
		return &d
	}
	if s.Wrapped {
		inner := ccpolicy.Entry{Name: s.Name, Command: s.Command, Args: s.Args}
		if s.Command == "" {
			inner.URL = s.URL
		}
		if ok, why := pol.Denies(inner, names...); ok {
			return &ccpolicy.Decision{Code: ccpolicy.DeniedInner, Why: "the server this wrapped entry runs is blocked: " + why + "; the shim refuses to start it (run mcp-heal unwrap " + s.Name + " to hand it back to Claude Code, which blocks it too)"}
		}
	}
	return nil
}

// Written is each entry of an mcpServers object as written (for a wrapped
// one, the shim's command), by key: what Claude Code's policy matches.
func Written(obj gjson.Result) map[string]ccpolicy.Entry {
	out := map[string]ccpolicy.Entry{}
	for _, m := range Members(obj) {
		args, _ := StringArray(LastVal(m.Val, "args"))
		out[m.Key] = ccpolicy.Entry{Name: m.Key, Command: LastVal(m.Val, "command").String(), Args: args, URL: LastVal(m.Val, "url").String()}
	}
	return out
}
