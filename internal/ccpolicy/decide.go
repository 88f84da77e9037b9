package ccpolicy

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// Scopes mcp-heal reads entries from, as the hook payload's
// mcp_server.source names them.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
	ScopeLocal   = "local"
	ScopePlugin  = "plugin"
)

// Exclusive is the managed-mcp.json that takes exclusive control of MCP
// servers in this session, or "".
func (p *Policy) Exclusive() string { return p.exclusive }

// Denies says whether deniedMcpServers matches e (under any of names
// too), and why. A plugin server's name is its full name
// (plugin:<plugin>:<server>): a rule naming its short name does not
// match it (measured).
func (p *Policy) Denies(e Entry, names ...string) (bool, string) {
	ex := p.expand(e)
	for _, r := range p.deny {
		if r.matches(e, names...) || r.name == "" && r.matches(ex) || r.url != nil && e.remote() && (r.url.deniesLoosely(e.URL) || r.url.deniesLoosely(ex.URL)) {
			return true, fmt.Sprintf("deniedMcpServers in %s blocks it by %s", r.file, r.kind())
		}
	}
	return false, ""
}

// Allows says whether allowedMcpServers admits e (always, when no source
// sets it). Sources add up (measured): an entry any list admits is
// admitted, unless managed settings set allowManagedMcpServersOnly, and
// then only the managed lists count. A stdio entry must match a
// serverCommand rule when the lists hold any, a remote one a serverUrl
// rule when they hold any; else a serverName rule.
func (p *Policy) Allows(e Entry, names ...string) bool {
	if !p.allowSet {
		return true
	}
	byCmd, byURL := false, false
	for _, r := range p.allow {
		byCmd = byCmd || r.command != nil
		byURL = byURL || r.url != nil
	}
	for _, r := range p.allow {
		switch {
		case r.command != nil && !e.remote(), r.url != nil && e.remote():
			if r.matches(e) || r.matches(p.expand(e)) {
				return true
			}
		case r.name != "" && (e.remote() && !byURL || !e.remote() && !byCmd):
			if r.matches(e, names...) {
				return true
			}
		}
	}
	return false
}

// Decide says whether Claude Code runs entry e as written, leaving aside
// project approval (Approval) and shadowing by another entry of its
// name.
func (p *Policy) Decide(e Entry, names ...string) Decision {
	if p.exclusive != "" {
		return Decision{ManagedOnly, "the organisation's " + p.exclusive + " takes exclusive control of MCP servers, so Claude Code runs only the servers it lists"}
	}
	if ok, why := p.Denies(e, names...); ok {
		return Decision{Denied, why}
	}
	if !p.Allows(e, names...) {
		return Decision{NotAllowed, "allowedMcpServers in " + p.allowFrom + " does not admit it"}
	}
	return Decision{}
}

// Approval is a project (.mcp.json) server's approval: Approved, Pending
// or Rejected. Measured with Claude Code 2.1.328 and 2.1.332: a name in
// disabledMcpjsonServers (the project's record in ~/.claude.json or a
// settings file) is rejected; it is approved when the folder's own trust
// dialog was accepted (its own record: a trusted parent is not enough) and
// it is in enabledMcpjsonServers or enableAllProjectMcpServers is set;
// pending otherwise.
func (p *Policy) Approval(name string) string {
	p.loadApproval()
	for _, obj := range p.approval {
		for _, d := range strs(last(obj, "disabledMcpjsonServers")) {
			if d == name {
				return Rejected
			}
		}
	}
	if !p.trusted {
		return Pending
	}
	for _, obj := range p.approval {
		if last(obj, "enableAllProjectMcpServers").Bool() {
			return Approved
		}
		for _, e := range strs(last(obj, "enabledMcpjsonServers")) {
			if e == name {
				return Approved
			}
		}
	}
	return Pending
}

// NotApproved is what doctor, heal and the probe say about a project
// (.mcp.json) server the user has not approved (approval Pending or
// Rejected): it is listed and never run, since running it is exactly what
// Claude Code's approval prompt protects a user who cloned a repository
// from.
func NotApproved(approval string) string {
	return DriftUnapproved + ": not run; " + ApprovalWhy(approval)
}

// ApprovalWhy is what not approved means, after "not run: ": the one
// sentence.
func ApprovalWhy(approval string) string {
	if approval == Rejected {
		return "the user rejected it in this project (disabledMcpjsonServers)"
	}
	return "Claude Code never got the user's approval for it (its prompt, or this folder's own trust dialog, was never accepted)"
}

// Source says whether a server the session reports from source (a hook
// payload's mcp_server.source) is one of the entries mcp-heal reads:
// "user", "local" and "project" are; "dynamic" (--mcp-config), "plugin",
// "managed" and any other are not, and nothing is run for them. An empty
// source (an older payload) says nothing.
func Source(source string) (Decision, bool) {
	switch source {
	case "", ScopeUser, ScopeLocal, ScopeProject:
		return Decision{}, true
	}
	return Decision{NotOurs, fmt.Sprintf("this session runs it from its %q configuration, which mcp-heal does not read", source)}, false
}

func strs(v gjson.Result) []string {
	var out []string
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type == gjson.String {
			out = append(out, e.Str)
		}
		return true
	})
	return out
}

// Wraps says why Claude Code would not run the wrapped form of entry name
// ("" when it would): wrapped is that form (`mcp-heal shim ...`) when
// known; when nil, a stand-in no serverCommand rule names, which is what
// an allowlist of commands makes of any wrapped entry the organisation did
// not list. Wrap leaves such an entry alone: wrapping it would stop a
// server Claude Code runs today.
func (p *Policy) Wraps(name string, wrapped *Entry) string {
	e := Entry{Name: name, Command: "\x00mcp-heal"}
	if wrapped != nil {
		e = *wrapped
	}
	if d := p.Decide(e); d.Code != Runs {
		return "wrapped, Claude Code would not run it: " + d.Why + " (the mcp-heal shim's command is not listed)"
	}
	return ""
}

// DriftUnapproved begins the Drift of a local copy wrap made of a project
// server the user no longer approves (claudecfg).
const DriftUnapproved = "not approved"

// Empty says whether no policy restricts MCP servers in this session (no
// managed-mcp.json, no deny rule, no allowlist): every entry runs, as far
// as the policy goes.
func (p *Policy) Empty() bool { return p.exclusive == "" && len(p.deny) == 0 && !p.allowSet }
