package plugin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/sha256sums/sumstest"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestLauncherSumsTable: the sh launcher runs the bundled binary exactly
// when SHA256SUMS lists its hash, on the table internal/sha256sums and the
// Windows launcher are tested on. It compared the listed hash as written,
// so an upper-case SHA256SUMS, which the Windows launcher took, failed
// here (issue 26).
func TestLauncherSumsTable(t *testing.T) {
	unixOnly(t, shLauncher)
	src := testenv.ModuleRoot(t)
	script, err := os.ReadFile(filepath.Join(src, "plugin", "mcp-heal"))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := os.ReadFile(filepath.Join(src, "plugin", "integrity.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// The bundled binary is a script: what is checked is the launcher.
	bin := []byte("#!/bin/sh\necho ran \"$@\"\n")
	b := sha256.Sum256(bin)
	sum := hex.EncodeToString(b[:])
	name := "mcp-heal-" + runtime.GOOS + "-" + runtime.GOARCH
	for _, c := range sumstest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			root, home := t.TempDir(), t.TempDir()
			for f, data := range map[string][]byte{
				"plugin/mcp-heal":            script,
				"plugin/integrity.sh":        checks,
				".claude-plugin/plugin.json": []byte(`{"name": "mcp-heal", "version": "1.2.3"}`),
				"bin/" + name:                bin,
				"bin/SHA256SUMS":             []byte(c.Expand(sum, name)),
			} {
				os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
				if err := os.WriteFile(filepath.Join(root, f), data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := launcher(root, "version")
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT=" + root, "CLAUDE_PLUGIN_DATA=" + filepath.Join(home, "data")}
			code, out, errOut := testenv.RunCode(t, cmd)
			ran := out == "ran version\n"
			if code != 0 && ran || ran != c.Runs {
				t.Fatalf("exit status %d, ran %v, want ran %v\nstdout %q\nstderr %q", code, ran, c.Runs, out, errOut)
			}
			if !c.Runs && !strings.Contains(errOut, "does not match the plugin's SHA256SUMS") {
				t.Errorf("stderr %q, want it to say the binary does not match", errOut)
			}
		})
	}
}
