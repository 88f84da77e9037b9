// Command release builds what a Claude Code user installs: the plugin with
// prebuilt, reproducible mcp-heal binaries for every supported platform and
// their SHA256SUMS, laid out as a ready marketplace.
//
//	go run ./internal/release -o DIR
//
// DIR then holds .claude-plugin/marketplace.json and the plugin itself
// (manifest, hooks, command, launcher, bin/mcp-heal for the Bash tool) with
// bin/mcp-heal-<os>-<arch> and bin/SHA256SUMS, and plugin/mcp-heal.exe, the
// launcher Windows runs for the same hooks.json line (plugin/winlauncher); `claude plugin marketplace
// add DIR` and `claude plugin install mcp-heal@mcp-heal` work from it
// without Go and without network.
// The launcher runs a bundled binary only when its SHA-256 matches
// bin/SHA256SUMS. Publishing is committing DIR to the `dist` branch (see
// docs/install.md).
//
// The binaries are reproducible: -trimpath, no cgo, no VCS stamp, an empty
// build id, the version from the plugin manifest stamped with -X; the same
// source and Go version give the same bytes.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mcp-heal/mcp-heal/internal/sha256sums"
)

// Target is one platform a binary is built for.
type Target struct{ GOOS, GOARCH string }

func (t Target) String() string { return t.GOOS + "/" + t.GOARCH }

// Binary is the file name of the target's binary under bin/, the name the
// launcher looks for (plugin/mcp-heal: bin/mcp-heal-$goos-$goarch).
func (t Target) Binary() string {
	name := "mcp-heal-" + t.GOOS + "-" + t.GOARCH
	if t.GOOS == "windows" {
		name += ".exe"
	}
	return name
}

// Targets are the platforms a release builds.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// WindowsLauncher is the Windows launcher's path in the plugin and the
// platform it is built for. hooks.json names plugin/mcp-heal in exec form;
// Windows, which cannot run the sh script, runs plugin/mcp-heal.exe for
// that name (plugin/winlauncher says why). One amd64 build serves arm64
// Windows too (it runs amd64 programs), and picks the arm64 binary there.
const WindowsLauncher = "plugin/mcp-heal.exe"

// WindowsToolsLauncher is the same launcher as the plugin's bin/mcp-heal.exe:
// the `mcp-heal` that the PowerShell tool, which Claude Code also gives the
// plugin's bin/, finds through PATHEXT (Git Bash runs bin/mcp-heal).
const WindowsToolsLauncher = "bin/mcp-heal.exe"

var windowsLauncherTarget = Target{"windows", "amd64"}

// pluginFiles are the files of the plugin, relative to the repository
// root, copied as they are. go.mod and plugin/build.sh stay out: without
// them the launcher never tries to build from source. bin/mcp-heal is the
// Bash tool's `mcp-heal` (Claude Code puts the plugin's bin/ on its PATH).
var pluginFiles = []string{
	".claude-plugin/plugin.json",
	".claude-plugin/marketplace.json",
	".claude-plugin/icon.png",
	"hooks/hooks.json",
	"monitors/monitors.json",
	"commands/mcp-heal.md",
	"plugin/mcp-heal",
	"plugin/link.sh",
	"plugin/integrity.sh",
	"bin/mcp-heal",
	"LICENSE",
	"README.md",
}

// Options say what to build where.
type Options struct {
	Root    string   // the repository (module) root
	Out     string   // the marketplace directory to create; must be empty or absent
	Version string   // stamped into the binaries; default: the manifest's
	Targets []Target // default: Targets
	Log     io.Writer
}

// Build assembles the marketplace in o.Out.
func Build(o Options) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if len(o.Targets) == 0 {
		o.Targets = Targets
	}
	if o.Version == "" {
		v, err := manifestVersion(filepath.Join(o.Root, ".claude-plugin", "plugin.json"))
		if err != nil {
			return err
		}
		o.Version = v
	}
	if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s is not empty: the release goes into a new directory", o.Out)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, f := range pluginFiles {
		if err := copyFile(filepath.Join(o.Root, f), filepath.Join(o.Out, f)); err != nil {
			return err
		}
	}
	if hasWindows(o.Targets) {
		fmt.Fprintf(o.Log, "build %s launcher\n", windowsLauncherTarget)
		if err := build(o.Root, windowsLauncherTarget, "./plugin/winlauncher", o.Version, filepath.Join(o.Out, filepath.FromSlash(WindowsLauncher))); err != nil {
			return err
		}
		if err := copyFile(filepath.Join(o.Out, filepath.FromSlash(WindowsLauncher)), filepath.Join(o.Out, filepath.FromSlash(WindowsToolsLauncher))); err != nil {
			return err
		}
	}
	bin := filepath.Join(o.Out, "bin")
	sums := map[string]string{}
	for _, t := range o.Targets {
		fmt.Fprintf(o.Log, "build %s\n", t)
		out := filepath.Join(bin, t.Binary())
		if err := build(o.Root, t, "./cmd/mcp-heal", o.Version, out); err != nil {
			return err
		}
		sum, err := sha256sums.Sum(out)
		if err != nil {
			return err
		}
		sums[t.Binary()] = sum
	}
	return os.WriteFile(filepath.Join(bin, "SHA256SUMS"), sha256sums.Format(sums), 0o644)
}

func hasWindows(ts []Target) bool {
	for _, t := range ts {
		if t.GOOS == "windows" {
			return true
		}
	}
	return false
}

// build cross-compiles the main package pkg for t. GOTOOLCHAIN=local: a
// release is built with the Go that is installed, never one fetched on
// the way.
func build(root string, t Target, pkg, version, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X main.version="+version,
		"-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "GOTOOLCHAIN=local", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", t, err, stderr.Bytes())
	}
	return nil
}

// manifestVersion reads "version" from plugin.json.
func manifestVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var m struct{ Version string }
	if err := json.Unmarshal(b, &m); err != nil || m.Version == "" {
		return "", fmt.Errorf("%s: no version (%v)", path, err)
	}
	return m.Version, nil
}

// copyFile copies src to dst with src's permission bits (the launcher
// stays executable).
func copyFile(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, st.Mode().Perm())
}
