package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcp-heal/mcp-heal/internal/paths"
	"github.com/mcp-heal/mcp-heal/internal/sha256sums"
)

// goMin is go.mod's `go` line, named in the advice (plugin/launcher_test.go
// checks the sh launcher's; winlauncher's test checks this one).
const goMin = "1.26.8"

type launcher struct {
	goos   string
	args   []string
	kind   string // hook, command or cli
	event  string // the hook's event
	paths  paths.Paths
	getenv func(string) string
	root   string // the plugin's root: where this program is, one up
	cache  string // the private cache (PluginData/bin), "" when none or unusable
	key    string // the plugin version as a file name part
	told   bool   // say: a marker could not be recorded
}

func newLauncher(goos string, args []string, getenv func(string) string) *launcher {
	l := &launcher{goos: goos, args: args, kind: "cli", getenv: getenv, paths: paths.For(goos, getenv)}
	if len(args) > 0 && args[0] == "hook" {
		l.kind = "hook"
		if len(args) > 1 {
			l.event = args[1]
		}
	}
	if len(args) > 0 && args[0] == "command" {
		l.kind = "command"
	}
	return l
}

// healthy reports whether the attention directory is empty (names
// starting with "." are temporary files, as the sh launcher's glob skips
// them): nothing for the binary to decide before this MCP call.
func (l *launcher) healthy() bool {
	d, err := os.Open(l.paths.Attention)
	if err != nil {
		return os.IsNotExist(err)
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(64)
		for _, n := range names {
			if !strings.HasPrefix(n, ".") {
				return false
			}
		}
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// find returns the binary to run, or says why there is none and returns "".
func (l *launcher) find() string {
	exe, err := os.Executable()
	if err != nil {
		l.say("missing", fmt.Sprintf("mcp-heal: the launcher cannot find where it is (%v), so mcp-heal's hooks are off.", err))
		return ""
	}
	l.root = filepath.Dir(filepath.Dir(exe))
	if filepath.Base(filepath.Dir(exe)) == "bin" {
		// bin/mcp-heal.exe: the Bash and PowerShell tools' `mcp-heal`
		// (Claude Code puts the plugin's bin/ on their PATH). Another
		// plugin's CLAUDE_PLUGIN_DATA may be in their environment: it is
		// ignored, and there is no cache, as for bin/mcp-heal.
		l.paths.PluginData = ""
	}
	l.key = versionKey(readVersion(filepath.Join(l.root, ".claude-plugin", "plugin.json")))
	if b := l.getenv("MCP_HEAL_BIN"); b != "" {
		if st, err := os.Stat(b); err == nil && st.Mode().IsRegular() {
			return b
		}
	}
	if l.paths.PluginData != "" {
		l.cache = filepath.Join(l.paths.PluginData, "bin")
		if err := privateDir(l.cache); err != nil {
			l.cache = ""
		}
	}
	cached := filepath.Join(l.cache, "mcp-heal-"+l.key+exeSuffix(l.goos))
	if l.cache != "" && regular(cached) {
		l.installStable(cached)
		return cached
	}
	// No plugin data (the `!` line, the Bash and PowerShell tools): the
	// stable copy of this version, checked when it was installed, is the
	// cache; a second copy beside it was issue 26's item 4.
	if l.paths.PluginData == "" && l.stableCurrent() {
		return l.paths.StableBinary
	}
	if bundled := l.bundled(); bundled != "" {
		want, why := l.wantSum(filepath.Base(bundled))
		if why != "" {
			l.say("integrity", why)
			return ""
		}
		if l.cache != "" {
			switch err := verifiedCopy(bundled, cached, want); {
			case err == nil:
				l.installStable(cached)
				return cached
			case err == errMismatch:
				l.mismatch(bundled)
				return ""
			}
		}
		// No cache to hold a checked copy: check the bundled file itself
		// on every run.
		if got, err := sha256sums.Sum(bundled); err != nil || got != want {
			l.mismatch(bundled)
			return ""
		}
		l.installStable(bundled)
		return bundled
	}
	if l.stableCurrent() {
		return l.paths.StableBinary
	}
	if p, err := exec.LookPath("mcp-heal"); err == nil && !sameFile(p, exe) {
		return p
	}
	if _, err := os.Stat(filepath.Join(l.root, "go.mod")); err == nil {
		l.say("missing", fmt.Sprintf("mcp-heal: this is a source checkout, which the Windows launcher does not build, so mcp-heal's hooks are off. Build it (go build -o mcp-heal.exe ./cmd/mcp-heal, Go %s or newer) and set MCP_HEAL_BIN to it, or install the released plugin (see docs/install.md).", goMin))
		return ""
	}
	l.say("missing", fmt.Sprintf("mcp-heal: this copy of the plugin has no binary for %s/%s, so mcp-heal's hooks are off. Install the released plugin (see docs/install.md).", l.goos, nativeArch()))
	return ""
}

// bundled is this machine's bundled binary, or the launcher's own
// architecture's (Windows on arm64 runs amd64 programs), or "".
func (l *launcher) bundled() string {
	for _, arch := range []string{nativeArch(), goarch} {
		p := filepath.Join(l.root, "bin", "mcp-heal-"+l.goos+"-"+arch+exeSuffix(l.goos))
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// wantSum is the SHA-256 bin/SHA256SUMS gives name ("" when not listed),
// or why it cannot be checked.
func (l *launcher) wantSum(name string) (want, why string) {
	b, err := os.ReadFile(filepath.Join(l.root, "bin", "SHA256SUMS"))
	if err != nil {
		return "", fmt.Sprintf("mcp-heal: reinstall the plugin (claude plugin install mcp-heal@mcp-heal): it has no bin/SHA256SUMS to check bin/%s against, so it was not run and mcp-heal's hooks are off.", name)
	}
	return sha256sums.Lookup(b, name), ""
}

func (l *launcher) mismatch(bundled string) {
	l.say("integrity", fmt.Sprintf("mcp-heal: reinstall the plugin (claude plugin install mcp-heal@mcp-heal): the bundled binary bin/%s does not match the plugin's SHA256SUMS, so it was not run and mcp-heal's hooks are off.", filepath.Base(bundled)))
}

// say prints one line where the caller will see it: a hook's
// systemMessage (once per version and reason, a marker in the cache;
// without a cache only SessionStart says it), or stderr.
func (l *launcher) say(why, msg string) {
	if l.kind != "hook" {
		fmt.Fprintln(os.Stderr, msg)
		return
	}
	if l.cache != "" {
		marker := filepath.Join(l.cache, ".told-"+l.key+"-"+why)
		if _, err := os.Lstat(marker); err == nil {
			return
		}
		if f, err := os.OpenFile(marker, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600); err == nil {
			f.Close()
		} else if l.event != "SessionStart" {
			return
		}
	} else if l.event != "SessionStart" {
		return
	}
	b, _ := json.Marshal(map[string]string{"systemMessage": msg})
	fmt.Printf("%s\n", b)
}

func exeSuffix(goos string) string {
	if goos == "windows" {
		return ".exe"
	}
	return ""
}

// regular reports whether p is a regular file, not a link.
func regular(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode().IsRegular()
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// privateDir makes d (0700) when missing and refuses a link or a
// non-directory. On Windows the user's profile ACL is what keeps others
// out; unix modes say nothing there.
func privateDir(d string) error {
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", d)
	}
	return nil
}
