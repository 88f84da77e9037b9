// Package paths is the one rule for where mcp-heal keeps things on disk:
// the state directory (shim records, incidents, logs, backups), the
// attention directory the PreToolUse fast path checks, the data directory
// and the stable binary wrapped servers point at, the runtime directory for
// sockets, and the plugin's data directory.
//
// The base directories come from adrg/xdg (Current): on Linux
// ~/.local/state and ~/.local/share, on macOS ~/Library/Application
// Support, on Windows %LOCALAPPDATA%, absolute XDG_* values winning. The
// plugin's sh launcher has no rule of its own: it records what `mcp-heal
// paths` prints, with the environment it was resolved for, and its
// PreToolUse fast path reads the attention directory from that record
// (plugin/mcp-heal). For computes the same rule for another platform
// (`mcp-heal paths --goos`, the Windows launcher, wrap's tests of Windows
// entries); TestForIsCurrent holds the two together on the platform the
// tests run on.
//
// macOS moved from ~/.local to ~/Library/Application Support: a
// directory of the old layout that exists keeps being used (darwinLegacy),
// so entries wrapped earlier (which run ~/.local/share/mcp-heal/bin/mcp-heal)
// get the new binary and kept servers' sockets are found where they are.
package paths

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/adrg/xdg"
)

// Paths are the directories and files of one user on one platform.
type Paths struct {
	State        string // $XDG_STATE_HOME/mcp-heal (macOS, Windows: <base>/mcp-heal/state)
	Attention    string // State/attention
	Data         string // $XDG_DATA_HOME/mcp-heal (macOS, Windows: <base>/mcp-heal/data)
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
// directory (adrg/xdg would take "/").
const noHome = "/nonexistent"

// bases are the XDG base directories of one platform, and whether each is
// the user's own (set by its variable, or macOS's old layout): then
// mcp-heal's directory is <base>/mcp-heal on every platform. runtime is ""
// when XDG_RUNTIME_DIR is not set.
type bases struct {
	state, data, runtime string
	stateSet, dataSet    bool
}

// build hangs mcp-heal's paths from the bases. Where state and data share
// one default base (macOS's Application Support, Windows' LocalAppData),
// each gets its own subdirectory.
func build(goos string, b bases, pluginData string) Paths {
	join := func(elem ...string) string { return filepath.ToSlash(filepath.Join(elem...)) }
	if goos == "windows" {
		join = WindowsJoin
	}
	shared := goos == "darwin" || goos == "windows"
	state, data := join(b.state, "mcp-heal"), join(b.data, "mcp-heal")
	if shared && !b.stateSet {
		state = join(state, "state")
	}
	if shared && !b.dataSet {
		data = join(data, "data")
	}
	p := Paths{
		State:        state,
		Attention:    join(state, "attention"),
		Data:         data,
		StableBinary: join(data, "bin", "mcp-heal"),
		Runtime:      join(state, "run"),
		PluginData:   pluginData,
	}
	if goos == "windows" {
		p.StableBinary += ".exe"
	}
	if b.runtime != "" {
		p.Runtime = join(b.runtime, "mcp-heal")
	}
	return p
}

// For computes the paths for goos from an environment, with adrg/xdg's
// defaults for that platform (xdg itself answers for this one only).
// Relative XDG_* values are ignored, as the XDG Base Directory spec says.
// It never looks at the disk: the macOS move's old layout is Current's.
func For(goos string, getenv func(string) string) Paths {
	home := getenv("HOME")
	if goos == "windows" && home == "" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		home = noHome
	}
	// Computing another platform's paths must not use this platform's
	// separator.
	join := func(elem ...string) string { return filepath.ToSlash(filepath.Join(elem...)) }
	def := join(home, ".local", "state")
	defData := join(home, ".local", "share")
	switch goos {
	case "darwin":
		def = join(home, "Library", "Application Support")
		defData = def
	case "windows":
		local := getenv("LOCALAPPDATA")
		if !isAbs(goos, local) {
			local = WindowsJoin(home, "AppData", "Local")
		}
		def, defData = local, local
	}
	var b bases
	b.state, b.stateSet = envOr(goos, getenv, "XDG_STATE_HOME", def)
	b.data, b.dataSet = envOr(goos, getenv, "XDG_DATA_HOME", defData)
	if v := getenv("XDG_RUNTIME_DIR"); isAbs(goos, v) {
		b.runtime = v
	}
	pd := getenv("CLAUDE_PLUGIN_DATA")
	if !isAbs(goos, pd) {
		pd = ""
	}
	return build(goos, b, pd)
}

func envOr(goos string, getenv func(string) string, name, def string) (string, bool) {
	if v := getenv(name); isAbs(goos, v) {
		return v, true
	}
	return def, false
}

// Current is this platform's paths for this process's environment, from
// adrg/xdg. xdg computes at init: when HOME or an XDG_* variable changed
// since (tests set them), it is reloaded first.
func Current() Paths {
	goos, getenv := runtime.GOOS, os.Getenv
	if goos == "windows" {
		// The known folder xdg asks Windows for is %LOCALAPPDATA% on
		// Windows; under Wine it is the prefix's, not the variable the
		// tests set. The variable, when absolute, is the rule there.
		if isAbs(goos, getenv("LOCALAPPDATA")) || getenv("USERPROFILE")+getenv("HOME") == "" {
			return For(goos, getenv)
		}
	} else if getenv("HOME") == "" {
		return For(goos, getenv) // noHome, where xdg would take "/"
	}
	return resolve(goos, getenv, xdgBases(), dirExists)
}

var (
	xdgMu  sync.Mutex
	xdgEnv string
)

// xdgBases is adrg/xdg's answer, reloaded when the environment it reads
// changed; runtime only when XDG_RUNTIME_DIR is taken (xdg's default, Linux's
// /run/user/<uid> or macOS's Application Support, is not used: State/run
// is).
func xdgBases() bases {
	vars := []string{"HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "LOCALAPPDATA", "USERPROFILE"}
	var key strings.Builder
	for _, v := range vars {
		key.WriteString(os.Getenv(v) + "\x00")
	}
	xdgMu.Lock()
	defer xdgMu.Unlock()
	if key.String() != xdgEnv {
		xdg.Reload()
		xdgEnv = key.String()
	}
	b := bases{state: xdg.StateHome, data: xdg.DataHome}
	if xdgTakes(runtime.GOOS, os.Getenv("XDG_RUNTIME_DIR")) {
		b.runtime = xdg.RuntimeDir
	}
	return b
}

// resolve hangs mcp-heal's paths from xdg's bases b for goos, keeping
// macOS's old layout where it exists. The platform, environment and disk
// are parameters so that each platform's rule is tested on any.
func resolve(goos string, getenv func(string) string, b bases, exists func(string) bool) Paths {
	home := getenv("HOME")
	b.stateSet = xdgTakes(goos, getenv("XDG_STATE_HOME"))
	b.dataSet = xdgTakes(goos, getenv("XDG_DATA_HOME"))
	if goos == "darwin" && !b.stateSet {
		b.state, b.stateSet = darwinLegacy(home, b.state, exists, ".local", "state")
	}
	if goos == "darwin" && !b.dataSet {
		b.data, b.dataSet = darwinLegacy(home, b.data, exists, ".local", "share")
	}
	pd := getenv("CLAUDE_PLUGIN_DATA")
	if !isAbs(goos, pd) {
		pd = ""
	}
	return build(goos, b, pd)
}

// darwinLegacy keeps macOS on ~/.local/{state,share}/mcp-heal, the layout
// before adrg/xdg's Application Support, where that directory exists:
// wrapped entries run the stable copy there, and kept servers listen in its
// run directory. It returns the base and whether it is one's own.
func darwinLegacy(home, base string, exists func(string) bool, elem ...string) (string, bool) {
	old := filepath.Join(append([]string{home}, elem...)...)
	if exists(filepath.Join(old, "mcp-heal")) {
		return old, true
	}
	return base, false
}

// xdgTakes reports whether adrg/xdg uses an XDG_* value rather than its
// default: an absolute path, or one it expands from ~ or $HOME.
func xdgTakes(goos, v string) bool {
	return isAbs(goos, v) || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "$HOME")
}

func dirExists(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

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
