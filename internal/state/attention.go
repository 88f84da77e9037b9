package state

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/paths"
)

// AttentionDir holds one empty file per reason the PreToolUse hook may have
// something to do before an MCP call: a shim marked failed ("shim-<pid>",
// kept by Write and Remove) or a server with an open incident
// ("server-<name>", kept by the hooks; its modification time is that of
// the server's latest incident). An empty directory is the hook's healthy
// path, which the plugin's launcher checks with shell builtins alone and
// answers without starting the binary (plugin/mcp-heal): the check before
// every MCP call costs a shell, not a Go process. A marker left behind only
// costs speed, never correctness: the binary then decides, and removes what
// is stale (StaleAttention).
func AttentionDir() string { return paths.Current().Attention }

// ShimAttention is the marker key of a failed shim.
func ShimAttention(pid int) string { return "shim-" + strconv.Itoa(pid) }

// ServerAttention is the marker key of a server with an open incident.
func ServerAttention(server string) string { return "server-" + SafeName(server) }

// SetAttention creates (on) or removes (off) the marker key.
func SetAttention(key string, on bool) error { return setMarker(AttentionDir(), key, on) }

// MarkServer creates (on, or refreshes: its time is then now) or removes
// (off) the attention marker of server.
func MarkServer(server string, on bool) error {
	return refreshMarker(AttentionDir(), ServerAttention(server), on)
}

// StaleAttention removes the server markers not refreshed since before
// (shim markers follow their records: Write and Remove keep them).
func StaleAttention(before time.Time) error {
	ents, err := os.ReadDir(AttentionDir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "server-") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(before) {
			err = os.Remove(filepath.Join(AttentionDir(), e.Name()))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// CalledDir holds one empty file per server with an open incident to which
// Claude Code started a call since ("server-<name>"), whose modification
// time is that start. Claude Code runs PreToolUse only for a call it is
// about to send, and PostToolUseFailure records a new incident when the
// call fails; so a marker newer than the server's latest incident means a
// call went out after it and did not fail: the server answers again. That
// is how an incident closes without a hook after every call (which would
// cost every MCP call a process; docs/end-to-end.md, hook cost).
func CalledDir() string { return filepath.Join(Dir(), "called") }

// MarkCalled records that a call to server starts now (on), or forgets
// the last one (off).
func MarkCalled(server string, on bool) error {
	return refreshMarker(CalledDir(), ServerAttention(server), on)
}

// CalledAt is when the last call to server marked by MarkCalled started.
func CalledAt(server string) (time.Time, bool) {
	fi, err := os.Lstat(filepath.Join(CalledDir(), ServerAttention(server)))
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// refreshMarker is setMarker whose "on" replaces the marker by a new
// one, so its modification time is now: a new file renamed over it, which
// never leaves the marker missing (a launcher looking at that moment would
// take the healthy path) and, unlike os.Chtimes, never follows a symlink
// planted in its place (rename replaces the link itself).
func refreshMarker(dir, key string, on bool) error {
	if !on {
		return setMarker(dir, key, false)
	}
	if err := EnsureDir(dir); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+key+"."+strconv.Itoa(os.Getpid())+".tmp")
	f, err := OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		return err
	}
	f.Close()
	if err := os.Rename(tmp, filepath.Join(dir, key)); err != nil {
		os.Remove(tmp)
		return err
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
