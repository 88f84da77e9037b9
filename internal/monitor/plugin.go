package monitor

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvPluginRoot names the plugin version's directory to the monitor: the
// launcher (plugin/mcp-heal) sets it for `monitor`, whose environment has
// no CLAUDE_PLUGIN_ROOT (docs/claude-code-behaviour.md).
const EnvPluginRoot = "MCP_HEAL_PLUGIN_ROOT"

// Orphaned is the file Claude Code writes into a plugin version's cache
// directory when no installed plugin uses it any more (/plugin uninstall;
// 2.1.328 and 2.1.332 leave the directory in place, marked): its content
// is the time in milliseconds. A reinstall removes it.
const Orphaned = ".orphaned_at"

// PluginGone reports whether the plugin the monitor runs from was
// removed: its version directory root is gone or marked Orphaned, or the
// binary's own file exe is gone ("" skips a check). Two stats: the
// monitor asks once a poll.
func PluginGone(root, exe string) bool {
	if root != "" {
		if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if _, err := os.Lstat(filepath.Join(root, Orphaned)); err == nil {
			return true
		}
	}
	if exe != "" {
		if _, err := os.Stat(exe); errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}
