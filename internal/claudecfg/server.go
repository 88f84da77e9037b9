// Package claudecfg finds the MCP server entries Claude Code would load for a
// project in every scope (project .mcp.json, ~/.claude.json user and local
// scopes, plugin-provided servers), with their approval, and resolves a
// wrapped entry to the real server. It only reads: the hooks, status,
// doctor and probe import it alone. Rewriting the entries (wrap, unwrap) is
// claudecfg/wrap; writing a file safely is internal/cfgfile.
package claudecfg

import (
	"fmt"

	"github.com/mcp-heal/mcp-heal/internal/ccpolicy"
	"github.com/mcp-heal/mcp-heal/internal/redact"
)

// Scopes a server entry can come from.
const (
	ScopeProject = "project" // <project>/.mcp.json
	ScopeUser    = "user"    // ~/.claude.json "mcpServers"
	ScopeLocal   = "local"   // ~/.claude.json "projects"[<project>]["mcpServers"]
	ScopePlugin  = "plugin"  // an installed plugin's .mcp.json or plugin.json
)

// Server is one MCP server entry as configured, with its wrapped state
// resolved: for a wrapped entry, Command/Args/URL/Headers describe the real
// server the shim runs, not the shim.
type Server struct {
	Name      string            `json:"name"`      // as Claude Code knows it (plugin servers: "plugin:<plugin>:<server>")
	Scope     string            `json:"scope"`     // Scope* constant
	File      string            `json:"file"`      // the config file it was read from
	Transport string            `json:"transport"` // "stdio", "http" or "sse"
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"-"` // values are secrets: never print them
	EnvKeys   []string          `json:"env_keys,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"-"` // values are secrets: never print them
	Wrapped   bool              `json:"wrapped"`
	Shadowed  bool              `json:"shadowed,omitempty"` // a higher-precedence scope defines the same name

	// Key is the entry's key in its mcpServers object (Name without the
	// plugin prefix) and JSONPath the path of that object in File: what
	// Wrap and Unwrap take.
	Key      string   `json:"-"`
	JSONPath []string `json:"-"`
	// Shim is the wrapped entry's own command (the mcp-heal binary).
	Shim string `json:"shim,omitempty"`
	// Plugin is the plugin id ("name@marketplace") of a plugin server.
	Plugin string `json:"plugin,omitempty"`
	// Approval is, for project (.mcp.json) servers, Approved, Rejected
	// or Pending: Claude Code loads only approved ones (approval.go).
	Approval string `json:"approval,omitempty"`
	// Protects is, for a local entry wrap made to protect a project
	// server, the .mcp.json file of that server (project.go); Drift says
	// how that .mcp.json entry changed since ("" when it did not).
	Protects string `json:"protects,omitempty"`
	Drift    string `json:"drift,omitempty"`
	// Policy is, when Claude Code's policy keeps this entry from running
	// (or, for a wrapped entry, keeps the shim from running its real
	// server), what and why (ccpolicy): mcp-heal never runs, probes or
	// heals it either.
	Policy *ccpolicy.Decision `json:"policy,omitempty"`
	// NoWrap says why wrap leaves this entry alone: Claude Code's
	// allowlist would refuse its wrapped form (ccpolicy.Policy.Wraps).
	NoWrap string `json:"no_wrap,omitempty"`
	// Twin names the plugin's server this entry, as written, keeps from
	// running by running the same server (ccpolicy.Twin): wrap leaves it
	// alone.
	Twin string `json:"twin,omitempty"`
	// hash is a project entry's content hash, or the one a protecting
	// local entry recorded.
	hash string
}

// Approval of a project (.mcp.json) server in Claude Code.
const (
	Approved = ccpolicy.Approved
	Pending  = ccpolicy.Pending  // never approved, or the folder's own trust never accepted
	Rejected = ccpolicy.Rejected // in disabledMcpjsonServers
)

// Unapproved says whether s is a project server the user has not approved
// (pending or rejected): Claude Code does not load it, and mcp-heal never
// runs, probes, heals or wraps it, nor lets it shadow another entry of the
// same name. A cloned repository's .mcp.json is such a server until the
// user approves it.
func (s Server) Unapproved() bool {
	return s.Approval == Pending || s.Approval == Rejected
}

// Loaded says whether Claude Code loads s (and mcp-heal may run it): approved
// (when it needs to be), allowed by Claude Code's policy, and not shadowed
// by a higher-precedence entry of the same name.
func (s Server) Loaded() bool { return !s.Shadowed && !s.Unapproved() && s.Policy == nil }

// NotRun says why mcp-heal must not run s, after "not run: " ("" when
// Claude Code runs it, as far as policy and approval go).
func (s Server) NotRun() string {
	switch {
	case s.Policy != nil:
		return s.Policy.Why
	case s.Unapproved():
		return ccpolicy.ApprovalWhy(s.Approval)
	}
	return ""
}

// Lookup finds the server Claude Code loaded under name, as configured or
// as it appears in tool names (ToolName): never an unapproved or shadowed
// entry, so a repository's rejected "github" cannot stand in for the
// user's own.
func Lookup(servers []Server, name string) (Server, bool) {
	for _, s := range servers {
		if s.Loaded() && (s.Name == name || ToolName(s.Name) == name) {
			return s, true
		}
	}
	return Server{}, false
}

// ToolName is a configured name as Claude Code writes it in tool names
// (characters outside [A-Za-z0-9_-] become "_").
func ToolName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Options says where Claude Code's files are: ccpolicy's, the one type,
// made from the environment by ccpolicy.FromEnv.
type Options = ccpolicy.Options

// Redacted returns s fit to print: its command, arguments and URL through
// the one rule (redact); Env and Headers are dropped.
func (s Server) Redacted() Server {
	s.Command, s.URL = redact.String(s.Command), redact.URL(s.URL)
	s.Args = redact.Strings(s.Args)
	s.Env, s.Headers = nil, nil
	return s
}

// Select returns the servers named (by Name or Key), in the order named,
// or an error naming those it does not have.
func Select(servers []Server, names []string) ([]Server, error) {
	var out []Server
	var missing []string
	for _, n := range names {
		found := false
		for _, s := range servers {
			if s.Name == n || s.Key == n {
				out, found = append(out, s), true
				break
			}
		}
		if !found {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no MCP server named %q", missing)
	}
	return out, nil
}
