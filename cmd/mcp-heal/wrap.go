package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
	"github.com/mcp-heal/mcp-heal/internal/paths"
	"github.com/mcp-heal/mcp-heal/internal/redact"
)

const wrapHelp = `
Rewrite MCP server entries so Claude Code launches them through
'mcp-heal shim' (stdio servers) or 'mcp-heal shim --url' (http and sse
servers), which restarts them and retries calls when they fail. Entries in
the local (~/.claude.json, this project), project (.mcp.json) and user
(~/.claude.json) scopes are rewritten in place: env, headers, args and every
other key are kept (header values move into the entry's env, out of the
command line), the rest of each file keeps its bytes, a backup goes to
$XDG_STATE_HOME/mcp-heal/backups, and 'mcp-heal unwrap' restores each entry
exactly. Wrapping twice is the same as wrapping once. Plugin-provided servers
cannot be wrapped. Claude Code picks the change up when restarted or after
'/mcp reconnect <name>'.
`

const unwrapHelp = `
Undo 'mcp-heal wrap': give each wrapped entry back its original bytes. An
entry wrapped by hand (no saved original) is rebuilt from the shim's
arguments. A backup goes to $XDG_STATE_HOME/mcp-heal/backups.
`

func runWrap(ctx context.Context, env *Env, args []string) error {
	return runRewrite(env, args, false)
}

// cfgFlags are the flags shared by the config commands.
type cfgFlags struct {
	project string
}

func (f *cfgFlags) options(env *Env) (claudecfg.Options, error) {
	dir := f.project
	if dir == "" {
		dir = env.Getenv("CLAUDE_PROJECT_DIR")
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return claudecfg.Options{}, err
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return claudecfg.Options{}, err
	}
	home := env.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return claudecfg.Options{Home: home, ProjectDir: abs, ConfigDir: env.Getenv("CLAUDE_CONFIG_DIR")}, nil
}

// defaultShim is the stable copy the plugin installs (paths.StableBinary)
// when present, else this binary.
func defaultShim(env *Env) (string, error) {
	stable := paths.For(runtime.GOOS, env.Getenv).StableBinary
	if st, err := os.Stat(stable); err == nil && !st.IsDir() {
		return stable, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the mcp-heal binary: %w", err)
	}
	// `go run` builds into a temporary directory that is deleted on exit:
	// entries pointing there would break as soon as this command ends.
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "", &usageError{msg: "this mcp-heal is a temporary 'go run' build, which wrapped servers cannot point at",
			hint: "install it (go install ./cmd/mcp-heal) and run that, or pass --shim PATH"}
	}
	return exe, nil
}

// fileWork is one config file and the transforms due in it.
type fileWork struct {
	path  string
	scope []string
	old   []byte
	new   []byte
	rows  []changeRow
}

type changeRow struct {
	claudecfg.Change
	scope, file string
}

func runRewrite(env *Env, args []string, unwrap bool) error {
	name, synopsis, help := "wrap", "wrap [server...|--all] [--scope SCOPE] [--dry-run] [--shim PATH]", wrapHelp
	if unwrap {
		name, synopsis, help = "unwrap", "unwrap [server...|--all] [--scope SCOPE] [--dry-run]", unwrapHelp
	}
	fs := newFlags(name)
	var cf cfgFlags
	all := fs.Bool("all", false, "every server (instead of naming them)")
	scope := fs.String("scope", "all", "`SCOPE` to rewrite: project, user, local or all")
	dry := fs.Bool("dry-run", false, "print a diff of what would change and write nothing")
	var keepFor *time.Duration
	if !unwrap {
		keepFor = fs.Duration("keep", 0, "stdio servers keep running this long after Claude Code lets go of them, and the next session or /mcp reconnect re-attaches (see docs/keeper.md)")
	}
	var shim *string
	if !unwrap {
		shim = fs.String("shim", "", "the mcp-heal binary the entries run (default: $XDG_DATA_HOME/mcp-heal/bin/mcp-heal if present, else this binary)")
	}
	fs.StringVar(&cf.project, "project", "", "the project `DIR` (default: $CLAUDE_PROJECT_DIR, else the current directory)")
	if err := parseFlags(env, fs, synopsis, help, args); err != nil {
		return err
	}
	names := fs.Args()
	switch {
	case *all && len(names) > 0:
		return &usageError{msg: "give server names or --all, not both"}
	case !*all && len(names) == 0 && *dry:
		// A preview of everything is harmless: `/mcp-heal wrap --dry-run`.
		*all = true
	case !*all && len(names) == 0:
		return &usageError{msg: "no servers named", hint: fmt.Sprintf("run 'mcp-heal %s --all', or name servers (see 'mcp-heal status')", name)}
	}
	switch *scope {
	case "all", claudecfg.ScopeProject, claudecfg.ScopeUser, claudecfg.ScopeLocal:
	default:
		return &usageError{msg: fmt.Sprintf("unknown scope %q", *scope), hint: "use project, user, local or all"}
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	shimPath := ""
	if !unwrap {
		shimPath = *shim
		if shimPath == "" {
			if shimPath, err = defaultShim(env); err != nil {
				return err
			}
		}
		if shimPath, err = filepath.Abs(shimPath); err != nil {
			return err
		}
	}

	// Read and check every file before touching any.
	var work []*fileWork
	byPath := map[string]*fileWork{}
	for _, f := range claudecfg.ConfigFiles(o) {
		if *scope != "all" && f.Scope != *scope {
			continue
		}
		w := byPath[f.File]
		if w == nil {
			data, err := os.ReadFile(f.File)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			if err := claudecfg.Check(f.File, data); err != nil {
				return fmt.Errorf("%w (nothing was changed)", err)
			}
			w = &fileWork{path: f.File, old: data, new: data}
			byPath[f.File] = w
			work = append(work, w)
		}
		var sel []string
		if !*all {
			sel = names
			if len(claudecfg.EntryNames(w.new, f.JSONPath, names)) == 0 {
				continue // none of the names here; Wrap would treat nil as all
			}
		}
		var changes []claudecfg.Change
		if unwrap {
			w.new, changes, err = claudecfg.Unwrap(w.new, f.JSONPath, sel)
		} else {
			if sel == nil {
				sel = claudecfg.EntryNames(w.new, f.JSONPath, nil)
			}
			oauth := claudecfg.OAuthServers(o)
			var keep []string
			for _, n := range sel {
				if oauth[n] {
					changes = append(changes, claudecfg.Change{Name: n, Action: claudecfg.ActSkipped, Detail: "signs in with OAuth, which only Claude Code can do"})
					continue
				}
				keep = append(keep, n)
			}
			if len(keep) > 0 {
				var more []claudecfg.Change
				var flags []string
				if *keepFor > 0 {
					flags = []string{"--keep", keepFor.String()}
				}
				w.new, more, err = claudecfg.Wrap(w.new, f.JSONPath, keep, shimPath, flags...)
				changes = append(changes, more...)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.File, err)
		}
		w.scope = append(w.scope, f.Scope)
		for _, c := range changes {
			w.rows = append(w.rows, changeRow{c, f.Scope, f.File})
		}
	}

	// Names that matched nothing.
	found := map[string]bool{}
	for _, w := range work {
		for _, r := range w.rows {
			found[r.Name] = true
		}
	}
	var missing []string
	for _, n := range names {
		if !found[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		hint := "run 'mcp-heal status' to see the servers and their scopes"
		for _, n := range missing {
			if strings.HasPrefix(n, "plugin:") {
				hint = "plugin-provided servers cannot be wrapped: their config belongs to the plugin and is replaced when it updates"
			}
		}
		return &usageError{msg: fmt.Sprintf("no server named %s in scope %s", quoteList(missing), *scope), hint: hint}
	}

	home := o.Home
	changed := 0
	var reconnect []string
	for _, w := range work {
		if string(w.old) == string(w.new) {
			continue
		}
		if *dry {
			// Env and header values and URL tokens never reach the
			// output: through /mcp-heal it lands in the model's context.
			fmt.Fprint(env.Stdout, claudecfg.Diff(tildePath(w.path, home), redact.JSON(w.old), redact.JSON(w.new)))
			continue
		}
		backup, err := claudecfg.Commit(w.path, w.old, w.new)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "mcp-heal: backup of %s: %s\n", tildePath(w.path, home), backup)
	}
	for _, w := range work {
		for _, r := range w.rows {
			verb := r.Action
			if *dry && r.Changed() {
				verb = "would be " + verb
			}
			line := fmt.Sprintf("%s: %s (%s, %s)", r.Name, verb, r.scope, tildePath(r.file, home))
			if r.Detail != "" {
				line += ": " + r.Detail
			}
			fmt.Fprintln(env.Stdout, line)
			if r.Changed() {
				changed++
				reconnect = append(reconnect, r.Name)
			}
		}
	}
	switch {
	case len(work) == 0 || (changed == 0 && len(names) == 0 && noRows(work)):
		fmt.Fprintf(env.Stdout, "no MCP servers configured for %s\n", o.ProjectDir)
	case *dry:
		fmt.Fprintln(env.Stdout, "dry run: nothing was written")
	case changed > 0:
		if !unwrap && projectChanged(work) {
			// .mcp.json is usually committed: the entries now name this
			// machine's mcp-heal.
			fmt.Fprintf(env.Stdout, "Note: .mcp.json is usually shared through version control; its wrapped entries run %s, which teammates may not have. Keep it out of commits, or wrap only --scope local/user.\n", tildePath(shimPath, home))
		}
		sort.Strings(reconnect)
		reconnect = uniq(reconnect)
		fmt.Fprintf(env.Stdout, "Restart Claude Code, or run %s in it, to apply.\n", reconnectCommands(reconnect))
	}
	return nil
}

func projectChanged(work []*fileWork) bool {
	for _, w := range work {
		for _, r := range w.rows {
			if r.scope == claudecfg.ScopeProject && r.Changed() {
				return true
			}
		}
	}
	return false
}

func noRows(work []*fileWork) bool {
	for _, w := range work {
		if len(w.rows) > 0 {
			return false
		}
	}
	return true
}

func reconnectCommands(names []string) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, "/mcp reconnect "+n)
	}
	if len(parts) > 3 {
		return "/mcp reconnect <name> for each"
	}
	return "'" + strings.Join(parts, "', '") + "'"
}

func uniq(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || s[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// tildePath shortens a path under home to ~/...
func tildePath(p, home string) string {
	if home != "" && strings.HasPrefix(p, home+string(filepath.Separator)) {
		return "~" + p[len(home):]
	}
	return p
}
