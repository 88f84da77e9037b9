// Package paths is the one rule for where mcp-heal keeps things on disk:
// the state directory (shim records, incidents, logs, backups), the
// attention directory the PreToolUse fast path checks, the data directory
// and the stable binary wrapped servers point at, the runtime directory for
// sockets, and the plugin's data directory.
//
// The plugin's launcher (plugin/mcp-heal, POSIX sh) computes the same paths
// with shell builtins so that its healthy path never starts a process; the
// two must agree on every platform the release builds, which
// plugin/paths_test.go checks by running both (the launcher with a stub
// `uname`). Change one, change the other.
//
// The rule is XDG-style on every unix, macOS included: Claude Code users on
// a Mac live in a terminal, the launcher cannot afford to ask the OS, and
// ~/Library/Application Support (adrg/xdg's darwin default) would be a
// second rule the launcher had to mirror. Absolute XDG_* values win;
// relative ones are ignored, as the XDG Base Directory spec says.
package paths

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Paths are the directories and files of one user on one platform.
type Paths struct {
	State        string // $XDG_STATE_HOME/mcp-heal
	Attention    string // State/attention
	Data         string // $XDG_DATA_HOME/mcp-heal
	StableBinary string // Data/bin/mcp-heal: what wrapped server entries run
	Runtime      string // $XDG_RUNTIME_DIR/mcp-heal, else State/run: sockets
	// PluginData is $CLAUDE_PLUGIN_DATA, the launcher's private cache, or
	// "" without it: Claude Code gives it to hooks only (a command's `!`
	// line and the Bash tool run without it), and a guess would name a
	// directory the hooks do not use (issue 26, item 4).
	PluginData string
}

// noHome stands for a missing $HOME: nothing can be created under it, so
// state writes fail (hooks fail open) instead of landing in the working
// directory. The launcher uses the same stand-in.
const noHome = "/nonexistent"

// For computes the paths for goos from an environment. Windows, which the
// shim does not support yet, keeps everything under %LOCALAPPDATA%\mcp-heal
// unless XDG_* say otherwise.
func For(goos string, getenv func(string) string) Paths {
	home := getenv("HOME")
	if goos == "windows" && home == "" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		home = noHome
	}
	// Computing another platform's paths (mcp-heal paths --goos, wrap's
	// tests of Windows entries on Linux) must not use this platform's
	// separator.
	join := func(elem ...string) string { return filepath.ToSlash(filepath.Join(elem...)) }
	if goos == "windows" {
		join = WindowsJoin
	}
	// under is $env/mcp-heal when env holds an absolute path, else def.
	under := func(env string, def ...string) string {
		if v := getenv(env); isAbs(goos, v) {
			return join(v, "mcp-heal")
		}
		return join(def...)
	}
	state := under("XDG_STATE_HOME", home, ".local", "state", "mcp-heal")
	data := under("XDG_DATA_HOME", home, ".local", "share", "mcp-heal")
	if goos == "windows" {
		local := getenv("LOCALAPPDATA")
		if !isAbs(goos, local) {
			local = join(home, "AppData", "Local")
		}
		state = under("XDG_STATE_HOME", local, "mcp-heal", "state")
		data = under("XDG_DATA_HOME", local, "mcp-heal", "data")
	}
	p := Paths{
		State:        state,
		Attention:    join(state, "attention"),
		Data:         data,
		StableBinary: join(data, "bin", "mcp-heal"),
		Runtime:      join(state, "run"),
	}
	if goos == "windows" {
		p.StableBinary += ".exe"
	}
	if v := getenv("XDG_RUNTIME_DIR"); isAbs(goos, v) {
		p.Runtime = join(v, "mcp-heal")
	}
	if v := getenv("CLAUDE_PLUGIN_DATA"); isAbs(goos, v) {
		p.PluginData = v
	}
	return p
}

// Current is For this platform and this process's environment. It reads
// the environment on every call, so tests that set XDG_* need no reload.
func Current() Paths { return For(runtime.GOOS, os.Getenv) }

// Fields lists the paths as name, value pairs in a fixed order: what
// `mcp-heal paths` prints and the launcher's `paths` mode mirrors.
func (p Paths) Fields() [][2]string {
	return [][2]string{
		{"state", p.State},
		{"attention", p.Attention},
		{"data", p.Data},
		{"stable", p.StableBinary},
		{"runtime", p.Runtime},
		{"plugin_data", p.PluginData},
	}
}

// WindowsJoin joins Windows path elements with backslashes on any
// platform (filepath.Join is this platform's): forward slashes become
// backslashes, repeated separators collapse, and a UNC prefix (\\server)
// keeps its two leading backslashes.
func WindowsJoin(elem ...string) string {
	var parts []string
	for _, e := range elem {
		if e != "" {
			parts = append(parts, strings.ReplaceAll(e, "/", `\`))
		}
	}
	s := strings.Join(parts, `\`)
	unc := strings.HasPrefix(s, `\\`)
	for strings.Contains(s, `\\`) {
		s = strings.ReplaceAll(s, `\\`, `\`)
	}
	if unc {
		s = `\` + s
	}
	return s
}

func isAbs(goos, p string) bool {
	if goos == "windows" {
		return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') || strings.HasPrefix(p, `\\`)
	}
	return strings.HasPrefix(p, "/")
}
