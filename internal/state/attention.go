package state

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mcp-heal/mcp-heal/internal/paths"
)

// AttentionDir holds one empty file per reason the PreToolUse hook may have
// something to say before an MCP call: a shim marked failed
// ("shim-<pid>", kept by Write and Remove) or a server found dead for its
// Claude Code session ("server-<name>", kept by the hooks). An empty
// directory is the hook's healthy path, which the plugin's launcher checks
// with shell builtins alone and answers without starting the binary
// (plugin/mcp-heal): the check before every MCP call costs a shell, not a
// Go process. A marker left behind only costs speed, never correctness:
// the binary then decides, and cleans up what is stale.
func AttentionDir() string { return paths.Current().Attention }

// ShimAttention is the marker key of a failed shim.
func ShimAttention(pid int) string { return "shim-" + strconv.Itoa(pid) }

// ServerAttention is the marker key of a server found dead.
func ServerAttention(server string) string { return "server-" + SafeName(server) }

// SetAttention creates (on) or removes (off) the marker key.
func SetAttention(key string, on bool) error {
	path := filepath.Join(AttentionDir(), key)
	if !on {
		err := os.Remove(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := EnsureDir(AttentionDir()); err != nil {
		return err
	}
	f, err := OpenFile(path, os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return err
	}
	return f.Close()
}
