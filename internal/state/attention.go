package state

import (
	"crypto/sha256"
	"encoding/hex"
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

// StaleAttention removes the server markers and call marks not refreshed
// since before, temporary files a killed hook left, and the open/ directory
// of earlier versions (shim markers follow their records: Write and Remove
// keep them).
func StaleAttention(before time.Time) error {
	_ = os.RemoveAll(filepath.Join(Dir(), "open")) // RemoveAll removes a link, not its target
	for _, dir := range []string{AttentionDir(), CalledDir()} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
		for _, e := range ents {
			n := e.Name()
			tmp := strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".tmp")
			if !tmp && (dir == AttentionDir()) != strings.HasPrefix(n, "server-") {
				continue
			}
			old := before
			if tmp {
				old = time.Now().Add(-time.Minute)
			}
			if fi, err := e.Info(); err == nil && fi.ModTime().Before(old) {
				if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
		}
	}
	return nil
}

// CalledDir holds one file per session and server with an open incident
// to which Claude Code started a call since, holding that start's time.
// Claude Code runs PreToolUse only for a call it is about to send, and
// PostToolUseFailure records a new incident when the call fails; so a
// mark newer than the server's latest incident in the session means a call
// went out after it and did not fail (as far as the hooks can tell: an
// interrupted call forgets the mark): the server answers again. That is
// how an incident closes without a hook after every call (which would cost
// every MCP call a process; docs/end-to-end.md, hook cost). The time is
// the hooks' clock, the one incidents carry, not the file system's.
func CalledDir() string { return filepath.Join(Dir(), "called") }

func calledKey(session, server string) string {
	if session == "" {
		session = "none"
	}
	return "session-" + SafeName(session) + "-" + ServerAttention(server)
}

// MarkCalled records that a call to server in session starts at t.
func MarkCalled(session, server string, t time.Time) error {
	return writeMarker(CalledDir(), calledKey(session, server), []byte(t.UTC().Format(time.RFC3339Nano)))
}

// ForgetCalled forgets the last call marked for server in session.
func ForgetCalled(session, server string) error {
	return setMarker(CalledDir(), calledKey(session, server), false)
}

// CalledAt is when the last call to server in session marked by
// MarkCalled started.
func CalledAt(session, server string) (time.Time, bool) {
	f, err := OpenFile(filepath.Join(CalledDir(), calledKey(session, server)), os.O_RDONLY)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	b := make([]byte, 64)
	n, _ := f.Read(b)
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b[:n])))
	return t, err == nil
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
	return writeMarker(dir, key, nil)
}

// writeMarker replaces the marker key in dir by a new file holding data,
// renamed into place.
func writeMarker(dir, key string, data []byte) error {
	if err := EnsureDir(dir); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+key+"."+strconv.Itoa(os.Getpid())+".tmp")
	f, err := OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, key))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
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

// ToldDir holds one empty file per one-time notice the user was given
// (SessionStart's line about Claude Code's "[Conflicting scopes]" warning
// for a protected project server), so it is said once, not every session.
func ToldDir() string { return filepath.Join(Dir(), "told") }

// Told reports whether the notice key was given.
func Told(key string) bool {
	_, err := os.Lstat(filepath.Join(ToldDir(), toldName(key)))
	return err == nil
}

// MarkTold records that the notice key was given.
func MarkTold(key string) error { return setMarker(ToldDir(), toldName(key), true) }

// toldName is key hashed: a key may hold a path, too long for a name.
func toldName(key string) string {
	h := sha256.Sum256([]byte(key))
	return "n-" + hex.EncodeToString(h[:8])
}
