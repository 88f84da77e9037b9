package claudecfg

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/jsoncheck"
	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// approval returns whether Claude Code would load a project (.mcp.json)
// server. Measured with Claude Code 2.1.328: a name in
// "disabledMcpjsonServers" (the project's entry in ~/.claude.json or a
// settings file, where Claude Code migrates these lists) is rejected;
// it is approved when the folder's trust dialog was accepted
// ("hasTrustDialogAccepted" in the project's entry, or a parent's) and it is
// in "enabledMcpjsonServers" or "enableAllProjectMcpServers" is set;
// pending otherwise.
func (o Options) approval(read func(string) ([]byte, bool)) func(string) string {
	var objs []gjson.Result
	trusted := false
	if data, ok := read(o.GlobalConfigPath()); ok {
		projects := map[string]gjson.Result{} // one pass over a possibly huge object
		for _, m := range Members(LastVal(root(data), "projects")) {
			projects[m.Key] = m.Val
		}
		for _, k := range o.ProjectKeys() {
			if p, ok := projects[k]; ok {
				objs = append(objs, p)
				break
			}
		}
		for d := o.projectDir(); ; {
			if LastVal(projects[d], "hasTrustDialogAccepted").Bool() {
				trusted = true
			}
			p := filepath.Dir(d)
			if p == d {
				break
			}
			d = p
		}
	}
	var files []string
	for _, d := range o.settingsDirs() {
		files = append(files, filepath.Join(d, ".claude", "settings.local.json"), filepath.Join(d, ".claude", "settings.json"))
	}
	for _, f := range append(files, filepath.Join(o.configDir(), "settings.json")) {
		if data, ok := read(f); ok {
			objs = append(objs, root(data))
		}
	}
	return func(name string) string {
		for _, obj := range objs {
			dis, _ := StringArray(LastVal(obj, "disabledMcpjsonServers"))
			for _, d := range dis {
				if d == name {
					return Rejected
				}
			}
		}
		if !trusted {
			return Pending
		}
		for _, obj := range objs {
			if LastVal(obj, "enableAllProjectMcpServers").Bool() {
				return Approved
			}
			en, _ := StringArray(LastVal(obj, "enabledMcpjsonServers"))
			for _, e := range en {
				if e == name {
					return Approved
				}
			}
		}
		return Pending
	}
}

// OAuthServers names the servers Claude Code holds OAuth credentials for
// (~/.claude/.credentials.json "mcpOAuth", keyed "<name>|<hash>"): a shim
// cannot sign in for them, so wrap leaves them alone.
func OAuthServers(o Options) map[string]bool {
	out := map[string]bool{}
	data, err := regfile.ReadConfig(filepath.Join(o.configDir(), ".credentials.json"))
	if err != nil || jsoncheck.Valid(data) != nil {
		return out
	}
	for _, m := range Members(LastVal(root(data), "mcpOAuth")) {
		name, _, _ := strings.Cut(m.Key, "|")
		out[name] = true
		if n := m.Val.Get("serverName").String(); n != "" {
			out[n] = true
		}
	}
	return out
}
