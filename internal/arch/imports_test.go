package arch

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

const module = "github.com/mcp-heal/mcp-heal/"

// TestImportGraph pins which way the imports point.
//   - cfgfile (writing a file safely) sits below the config readers and
//     writers: it imported claudecfg for one capped read, the tree's one
//     upward arrow (the read is regfile.ReadConfig now).
//   - Flag parsing is the command line's (cmd/mcp-heal): bridge and
//     claudecfg parsed flags and made usage errors, so the shim's packages
//     linked pflag and the CLI helpers.
func TestImportGraph(t *testing.T) {
	testenv.NeedsSource(t)
	for _, dep := range deps(t, "internal/cfgfile") {
		if strings.HasPrefix(dep, module+"internal/claudecfg") {
			t.Errorf("internal/cfgfile depends on %s, which sits above it (it writes what claudecfg/wrap decides)", dep)
		}
	}
	for _, pkg := range []string{"internal/shim", "internal/bridge", "internal/claudecfg", "internal/health", "internal/proc", "internal/keep", "internal/upstream"} {
		d := deps(t, pkg)
		for _, w := range []string{"github.com/spf13/pflag", module + "internal/cli"} {
			if slices.Contains(d, w) {
				t.Errorf("%s depends on %s: flag parsing and usage errors belong to cmd/mcp-heal", pkg, w)
			}
		}
	}
}

// deps lists what pkg (a path in the module) depends on, itself included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", module+pkg)
	cmd.Dir = testenv.ModuleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v (the test needs the go command)", pkg, err)
	}
	d := strings.Fields(string(out))
	if !slices.Contains(d, module+pkg) {
		t.Fatalf("go list -deps %s does not list the package itself: %q", pkg, d)
	}
	return d
}

// TestPathsFromXDG: adrg/xdg, the design's library for paths, is the
// product's one source of them (issue 26): internal/paths imports it and
// is the only product package that does (testenv, a test helper, reloads
// it), and the packages that keep things on disk take their directories
// from internal/paths. Before, xdg was imported by testenv alone and
// internal/paths wrote its own rule.
func TestPathsFromXDG(t *testing.T) {
	testenv.NeedsSource(t)
	const xdg = "github.com/adrg/xdg"
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...")
	cmd.Dir = testenv.ModuleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v (the test needs the go command)", err)
	}
	var importers []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 && slices.Contains(f[1:], xdg) {
			importers = append(importers, strings.TrimPrefix(f[0], module))
		}
	}
	if !slices.Contains(importers, "internal/paths") {
		t.Errorf("internal/paths does not import %s: the product's paths do not come from it", xdg)
	}
	for _, p := range importers {
		if p != "internal/paths" && p != "internal/testenv" {
			t.Errorf("%s imports %s: paths come from internal/paths, which reads it", p, xdg)
		}
	}
	for _, pkg := range []string{"internal/state", "internal/keep", "internal/claudecfg", "cmd/mcp-heal"} {
		if !slices.Contains(deps(t, pkg), module+"internal/paths") {
			t.Errorf("%s does not depend on internal/paths", pkg)
		}
	}
}
