package ccpolicy

import (
	"os"
	"path/filepath"
	"runtime"
)

// Options says where Claude Code's files are for one session.
type Options struct {
	Home       string // the user's home
	ProjectDir string // the folder Claude Code runs in (cwd or CLAUDE_PROJECT_DIR)
	// ConfigDir is CLAUDE_CONFIG_DIR; empty means Home/.claude, with the
	// global config at Home/.claude.json.
	ConfigDir string
	// ManagedDir is the folder of the managed (organisation) files; empty
	// means the system's (ManagedDirFor). Tests set it; nothing else may,
	// since a user must not be able to step around the organisation's rules.
	ManagedDir string
	// Files reads every file ccpolicy reads for these options; nil is OS.
	Files Reader
	// Getenv is the session's environment, for the ${VAR} Claude Code
	// expands in a command and its rules before comparing them; nil is
	// the process's.
	Getenv func(string) string
}

// FromEnv is the one place Options are made from a process's environment:
// the project is project (a --project flag), else $CLAUDE_PROJECT_DIR,
// else cwd (a hook payload's), else the working directory; the home is
// $HOME, else the user's; the config folder $CLAUDE_CONFIG_DIR.
func FromEnv(getenv func(string) string, project, cwd string) (Options, error) {
	o := Options{Home: getenv("HOME"), ConfigDir: getenv("CLAUDE_CONFIG_DIR"), Getenv: getenv}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	for _, d := range []string{getenv("CLAUDE_PROJECT_DIR"), cwd} {
		if project == "" {
			project = d
		}
	}
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return o, err
		}
		project = wd
	}
	abs, err := filepath.Abs(project)
	if err != nil {
		return o, err
	}
	o.ProjectDir = abs
	return o, nil
}

func (o Options) files() Reader {
	if o.Files != nil {
		return o.Files
	}
	return OS
}

// ManagedDirFor is where Claude Code reads managed-settings.json, its
// drop-ins (managed-settings.d) and managed-mcp.json on goos, as Claude
// Code 2.1.332 names it.
func ManagedDirFor(goos string) string {
	switch goos {
	case "darwin":
		return "/Library/Application Support/ClaudeCode"
	case "windows":
		return `C:\Program Files\ClaudeCode`
	}
	return "/etc/claude-code"
}

func (o Options) managedDir() string {
	if o.ManagedDir != "" {
		return o.ManagedDir
	}
	return ManagedDirFor(runtime.GOOS)
}

// GlobalConfigPath is ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json).
func (o Options) GlobalConfigPath() string {
	if o.ConfigDir != "" {
		return filepath.Join(o.ConfigDir, ".claude.json")
	}
	return filepath.Join(o.HomeDir(), ".claude.json")
}

// ClaudeDir is ~/.claude (or $CLAUDE_CONFIG_DIR).
func (o Options) ClaudeDir() string {
	if o.ConfigDir != "" {
		return o.ConfigDir
	}
	return filepath.Join(o.HomeDir(), ".claude")
}

// HomeDir is Home, else the user's home.
func (o Options) HomeDir() string {
	if o.Home != "" {
		return o.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// Dir is the project folder, absolute and with symbolic links resolved:
// Claude Code runs in the resolved directory (getcwd).
func (o Options) Dir() string {
	d := o.ProjectDir
	if d == "" {
		d, _ = os.Getwd()
	}
	if a, err := filepath.Abs(d); err == nil {
		d = a
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	return d
}

// SettingsDirs are the directories whose .claude/settings*.json apply to
// the project: the project directory and its git root.
func (o Options) SettingsDirs() []string {
	d := o.Dir()
	if g := o.gitRoot(d); g != "" && g != d {
		return []string{d, g}
	}
	return []string{d}
}

// ProjectKeys are the keys under which ~/.claude.json "projects" may hold
// the project, most likely first. Claude Code keys local scope by the git
// root of its (symlink-resolved) working directory. They are the folder's
// own records: a parent's record is not one of them.
func (o Options) ProjectKeys() []string {
	d := o.ProjectDir
	if d == "" {
		d, _ = os.Getwd()
	}
	if a, err := filepath.Abs(d); err == nil {
		d = a
	}
	var keys []string
	add := func(k string) {
		for _, x := range keys {
			if x == k {
				return
			}
		}
		keys = append(keys, k)
	}
	real := d
	if r, err := filepath.EvalSymlinks(d); err == nil {
		real = r
	}
	if g := o.gitRoot(real); g != "" {
		add(g)
	}
	add(real)
	if g := o.gitRoot(d); g != "" {
		add(g)
	}
	add(d)
	return keys
}

func (o Options) gitRoot(dir string) string {
	for d := dir; ; {
		if _, err := o.files().Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return ""
		}
		d = p
	}
}
