package state

import (
	"path/filepath"
	"strings"

	"github.com/natefinch/atomic"
)

// The plugin's data directory (Claude Code's ${CLAUDE_PLUGIN_DATA}, where
// the launcher keeps its checked copy) reaches hooks only: a slash
// command's `!` line and the Bash tool run without it
// (docs/claude-code-behaviour.md). The SessionStart hook records it here so
// that `mcp-heal paths`, run from either, names the directory the hooks
// use and not a guess.
func pluginDataPath() string { return filepath.Join(Dir(), "plugin-data") }

// maxPluginDataBytes bounds the record a reader accepts: one path.
const maxPluginDataBytes = 4096

// RecordPluginData records dir as the plugin's data directory; it writes
// only when the record differs (once per install, not once per session).
func RecordPluginData(dir string) error {
	if !filepath.IsAbs(dir) || strings.ContainsAny(dir, "\n\r") || dir == PluginData() {
		return nil
	}
	if err := EnsureDir(Dir()); err != nil {
		return err
	}
	return atomic.WriteFile(pluginDataPath(), strings.NewReader(dir+"\n"))
}

// PluginData is the plugin data directory the hooks recorded, or "".
func PluginData() string {
	b, err := ReadFile(pluginDataPath(), maxPluginDataBytes)
	if err != nil {
		return ""
	}
	dir := strings.TrimSuffix(string(b), "\n")
	if !filepath.IsAbs(dir) || strings.ContainsAny(dir, "\n\r") {
		return ""
	}
	return dir
}
