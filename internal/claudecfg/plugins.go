package claudecfg

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// pluginServers returns the MCP servers of the plugins installed for the
// project and enabled. Claude Code records installs in
// ~/.claude/plugins/installed_plugins.json ({"version":2,"plugins":{"<plugin>@<marketplace>":[{"scope","installPath","projectPath"?}]}})
// and enables them with "enabledPlugins" in the user, project and local
// settings files (local wins). A plugin declares servers in <root>/.mcp.json
// or in .claude-plugin/plugin.json "mcpServers" (an object or a path);
// they are named plugin:<plugin>:<server>.
func pluginServers(o Options, read func(string) ([]byte, bool)) ([]Server, error) {
	data, ok := read(filepath.Join(o.ClaudeDir(), "plugins", "installed_plugins.json"))
	if !ok {
		return nil, nil
	}
	enabled := enabledPlugins(o, read)
	pd := o.Dir()
	projKeys := o.ProjectKeys()
	var ids []string
	plugins := LastVal(root(data), "plugins")
	for _, m := range Members(plugins) {
		ids = append(ids, m.Key)
	}
	sort.Strings(ids)
	var out []Server
	done := map[string]bool{}
	for _, id := range ids {
		if done[id] || !enabled[id] {
			continue
		}
		var install gjson.Result
		for _, inst := range LastVal(plugins, id).Array() {
			switch inst.Get("scope").String() {
			case "user", "":
				if !install.Exists() {
					install = inst
				}
			default: // project, local: only for their project
				pp := inst.Get("projectPath").String()
				for _, k := range append(projKeys, pd) {
					if pp == k {
						install = inst
					}
				}
			}
		}
		if !install.Exists() {
			continue
		}
		done[id] = true
		rootDir := install.Get("installPath").String()
		if rootDir == "" {
			continue
		}
		plugin, _, _ := strings.Cut(id, "@")
		for _, s := range pluginEntries(rootDir, read) {
			s.Name = "plugin:" + plugin + ":" + s.Key
			s.Scope, s.Plugin = ScopePlugin, id
			s.Command = expandPluginRoot(s.Command, rootDir)
			for i := range s.Args {
				s.Args[i] = expandPluginRoot(s.Args[i], rootDir)
			}
			s.URL = expandPluginRoot(s.URL, rootDir)
			out = append(out, s)
		}
	}
	return out, nil
}

func pluginEntries(rootDir string, read func(string) ([]byte, bool)) []Server {
	var out []Server
	add := func(file string, path []string) {
		data, ok := read(file)
		if !ok {
			return
		}
		obj, ok := At(data, path)
		if !ok || !obj.IsObject() {
			return
		}
		out = append(out, ParseServers(obj, ConfigFile{ScopePlugin, file, path})...)
	}
	manifest := filepath.Join(rootDir, ".claude-plugin", "plugin.json")
	if data, ok := read(manifest); ok {
		switch v := LastVal(root(data), "mcpServers"); {
		case v.IsObject():
			add(manifest, []string{"mcpServers"})
		case v.Type == gjson.String:
			f := filepath.Join(rootDir, expandPluginRoot(v.String(), rootDir))
			if filepath.IsAbs(expandPluginRoot(v.String(), rootDir)) {
				f = expandPluginRoot(v.String(), rootDir)
			}
			add(f, []string{"mcpServers"})
		case v.IsArray():
			for _, p := range v.Array() {
				if p.Type == gjson.String {
					add(filepath.Join(rootDir, p.String()), []string{"mcpServers"})
				}
			}
		default:
			add(filepath.Join(rootDir, ".mcp.json"), []string{"mcpServers"})
		}
		return out
	}
	add(filepath.Join(rootDir, ".mcp.json"), []string{"mcpServers"})
	return out
}

func expandPluginRoot(s, rootDir string) string {
	return strings.ReplaceAll(s, "${CLAUDE_PLUGIN_ROOT}", rootDir)
}

// enabledPlugins merges "enabledPlugins" from the user, project and local
// settings, later files overriding earlier ones.
func enabledPlugins(o Options, read func(string) ([]byte, bool)) map[string]bool {
	en := map[string]bool{}
	files := []string{filepath.Join(o.ClaudeDir(), "settings.json")}
	dirs := o.SettingsDirs()
	for i := len(dirs) - 1; i >= 0; i-- { // the git root first, the nearer directory last (wins)
		files = append(files, filepath.Join(dirs[i], ".claude", "settings.json"), filepath.Join(dirs[i], ".claude", "settings.local.json"))
	}
	for _, f := range files {
		data, ok := read(f)
		if !ok {
			continue
		}
		for _, m := range Members(LastVal(root(data), "enabledPlugins")) {
			en[m.Key] = m.Val.Bool()
		}
	}
	return en
}
