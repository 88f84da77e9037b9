package state

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"

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
func SetAttention(key string, on bool) error { return setMarker(AttentionDir(), key, on) }

// OpenDir holds one empty file per server with an open incident
// ("server-<name>", kept by the hooks), whose modification time is that of
// its latest incident. The PostToolBatch hook closes an open incident when
// the server answers again; while the directory is empty the plugin's
// launcher answers a batch without errors with builtins alone
// (plugin/mcp-heal). Like attention markers, a marker left behind only
// costs speed: the hook removes those older than its window.
func OpenDir() string { return filepath.Join(Dir(), "open") }

// SetOpen marks (on, refreshing the marker's time) or unmarks the server
// as having an open incident.
func SetOpen(server string, on bool) error {
	key := ServerAttention(server)
	if on {
		// Refresh by re-creating the marker (O_NOFOLLOW through
		// setMarker) rather than os.Chtimes, which would follow a
		// symlink planted in its place.
		if err := setMarker(OpenDir(), key, false); err != nil {
			return err
		}
	}
	return setMarker(OpenDir(), key, on)
}

// StaleOpen removes the open-incident markers not refreshed since before.
func StaleOpen(before time.Time) error {
	ents, err := os.ReadDir(OpenDir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(before) {
			err = os.Remove(filepath.Join(OpenDir(), e.Name()))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

func setMarker(dir, key string, on bool) error {
	path := filepath.Join(dir, key)
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
	if err := EnsureDir(dir); err != nil {
		return err
	}
	f, err := OpenFile(path, os.O_CREATE|os.O_WRONLY)
	if err != nil {
		return err
	}
	return f.Close()
}
