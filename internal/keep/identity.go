package keep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcp-heal/mcp-heal/internal/paths"
)

// Identity is the hash of what makes a kept server the same server: its
// name, command, arguments, working directory, Claude Code's config dir and
// the environment variables its config entry sets (envNames; wrap --keep
// names them with --keep-env). The config dir is part of it because it is
// another account (work and personal, CLAUDE_CONFIG_DIR): its sessions
// never attach to a server started with the other one's environment. The
// folders are canonical (Canonical): one folder spelt several ways is one
// identity. The rest of the environment is Claude Code's own and
// differs between sessions (CLAUDE_CODE_SESSION_ID and more), so it is
// left out, or a new session would never find its kept server. A config
// entry that changes any of them gets a new identity: its old kept server
// is never reused.
func Identity(name, command string, args []string, env map[string]string, cwd, configDir string) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field("mcp-heal keep 2")
	field(name)
	field(command)
	field(fmt.Sprint(len(args)))
	for _, a := range args {
		field(a)
	}
	envFields(field, env)
	field(cwd)
	field(configDir)
	return hex.EncodeToString(h.Sum(nil))
}

// Canonical is dir absolute, cleaned and with its symlinks resolved (as
// far as it exists): the one spelling of a folder that a symlink, its real
// path and a trailing slash share.
func Canonical(dir string) string {
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

// ConfigDir is the Claude Code config dir a session with this environment
// uses: CLAUDE_CONFIG_DIR, else ~/.claude, canonical.
func ConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return Canonical(d)
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return Canonical(filepath.Join(home, ".claude"))
}

// Slot is the hash of what makes two kept servers compete for one place:
// the name, the project (the working directory Claude Code starts the
// server in, and its config dir, CLAUDE_CONFIG_DIR, whose scopes define the
// entry) and the values of the environment variables the entry sets. A
// kept server is replaced only by one of the same slot whose identity
// differs, that is, by a changed command or arguments of the entry that
// server ran. Another project's server of the same name, or a session whose
// --keep-env values differ (another PROFILE expanded from the user's
// shell), is another slot: they coexist, each until its own window ends.
func Slot(name string, env map[string]string, cwd, configDir string) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field("mcp-heal keep slot 1")
	field(name)
	field(cwd)
	field(configDir)
	envFields(field, env)
	return hex.EncodeToString(h.Sum(nil))
}

// envFields hashes env in a stable order: its size, then each K=V sorted.
func envFields(field func(string), env map[string]string) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	field(fmt.Sprint(len(keys)))
	for _, k := range keys {
		field(k + "=" + env[k])
	}
}

// maxSocketPath keeps socket paths under the 104 bytes macOS allows
// (sockaddr_un.sun_path; Linux allows 108).
const maxSocketPath = 100

// SocketPath is where the kept guardian of identity listens: the runtime
// directory (internal/paths: $XDG_RUNTIME_DIR/mcp-heal, else the state
// dir's "run"), or a per-user directory in the temp dir when that path
// would be too long for a socket. The directory is created 0700 and must be
// ours and not a symlink.
func SocketPath(identity string) (string, error) {
	name := "k-" + identity[:16] + ".sock"
	dirs := []string{paths.Current().Runtime, filepath.Join(os.TempDir(), fmt.Sprintf("mcp-heal-%d", os.Getuid()))}
	var errs []error
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if len(p) > maxSocketPath {
			errs = append(errs, fmt.Errorf("%s: longer than %d bytes", p, maxSocketPath))
			continue
		}
		if err := privateDir(d); err != nil {
			errs = append(errs, err)
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("no usable directory for the kept server's socket: %w", errors.Join(errs...))
}

// privateDir creates dir 0700 and checks that it is a directory (not a
// symlink) owned by us, then tightens it to 0700.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink?)", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not us", dir, uid)
	}
	return os.Chmod(dir, 0o700)
}
