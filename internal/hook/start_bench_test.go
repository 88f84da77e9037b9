//go:build unix

package hook_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestHookImportsNoNetwork keeps the hook's process lean (entry.go): the
// hook runs from this package's initialiser, which Go runs only after
// everything this package imports, so none of the bridge's packages may
// be among them (before, through the probe, the hook initialised net,
// crypto/tls and net/http: about a hundred initialisers).
func TestHookImportsNoNetwork(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/mcp-heal/mcp-heal/internal/hook").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch p {
		case "net", "net/http", "crypto/tls", "crypto/x509", "github.com/mcp-heal/mcp-heal/internal/bridge", "github.com/spf13/pflag":
			t.Errorf("internal/hook imports %s: the hook's process would initialise it", p)
		}
	}
}

// TestHealthyPathInits: on the healthy path (an empty attention directory)
// `mcp-heal hook PreToolUse` exits 0, silent, from internal/hook/healthy's
// initialiser, right after os's: none of the packages the rest of the
// binary needs is initialised (before, 78 initialisers ran, crypto's,
// compress and encoding/json among them, and then internal/hook's). With a
// marker in the attention directory, internal/hook decides, as before.
func TestHealthyPathInits(t *testing.T) {
	w, payload := healthyWorld(t)
	run := func() (inits []string) {
		cmd := exec.Command(testenv.Binary(t), "hook", "PreToolUse")
		// As the launcher runs it: told the attention directory.
		cmd.Env = append(w.env(), "GODEBUG=inittrace=1", "MCP_HEAL_ATTENTION="+state.AttentionDir())
		cmd.Stdin = strings.NewReader(string(payload))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.Len() != 0 {
			t.Fatalf("hook PreToolUse: %v, stdout %q, stderr %s", err, stdout.String(), stderr.String())
		}
		for _, l := range strings.Split(stderr.String(), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "init" {
				inits = append(inits, f[1])
			}
		}
		return inits
	}
	late := func(inits []string) (found []string) {
		for _, p := range inits {
			switch p {
			case "reflect", "unicode", "encoding/json", "compress/flate", "crypto/internal/fips140", "log/slog",
				"github.com/adrg/xdg", "github.com/mcp-heal/mcp-heal/internal/hook":
				found = append(found, p)
			}
		}
		return found
	}
	inits := run()
	if l := late(inits); len(l) != 0 {
		t.Errorf("healthy path: %d initialisers ran, among them %v", len(inits), l)
	}
	t.Logf("healthy path: %d initialisers: %s", len(inits), strings.Join(inits, " "))
	marker := filepath.Join(w.state, "mcp-heal", "attention", "server-x")
	if err := os.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// internal/hook's own line never prints: its initialiser exits.
	if l := late(run()); len(l) == 0 || l[len(l)-1] != "github.com/adrg/xdg" {
		t.Errorf("with a marker, internal/hook's imports were not initialised (late initialisers %v)", l)
	}
}

// BenchmarkHookStart: `mcp-heal hook PreToolUse` (healthy path), the whole
// process, against a minimal Go program that reads its stdin, both built
// as a release is (internal/release: CGO_ENABLED=0, -trimpath,
// -buildvcs=false, -ldflags "-s -w -buildid="), interleaved, 200 runs
// each; medians of wall time and CPU time, and the load average.
// $MCP_HEAL_BENCH_BASELINE, when set, names another mcp-heal binary (an
// older commit, built the same way) measured in the same rounds.
//
//	go test -run XXX -bench HookStart -benchtime 1x ./internal/hook
func BenchmarkHookStart(b *testing.B) {
	dir := b.TempDir()
	bin, minimal := filepath.Join(dir, "mcp-heal"), filepath.Join(dir, "minimal")
	for _, c := range [][]string{{bin, "./cmd/mcp-heal"}, {minimal, "./internal/hook/testdata/minimal"}} {
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -buildid=", "-o", c[0], c[1])
		cmd.Dir = testenv.ModuleRoot(b)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", c[1], err, out)
		}
	}
	w, payload := healthyWorld(b)
	// As the launcher runs it: told the attention directory (from the
	// binary's own record of its paths).
	env := append(w.env(), "MCP_HEAL_ATTENTION="+state.AttentionDir())
	la := func() string {
		l, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(l))[:3], " ")
	}
	runs := []struct {
		name string
		args []string
	}{{"minimal Go program", []string{minimal}}, {"hook PreToolUse", []string{bin, "hook", "PreToolUse"}}}
	if base := os.Getenv("MCP_HEAL_BENCH_BASELINE"); base != "" {
		runs = append(runs, struct {
			name string
			args []string
		}{"baseline hook PreToolUse", []string{base, "hook", "PreToolUse"}})
	}
	before := la()
	wall, cpu := make([][]time.Duration, len(runs)), make([][]time.Duration, len(runs))
	for range 200 {
		for j, rn := range runs {
			wl, c := timeExec(b, env, payload, rn.args[0], rn.args[1:]...)
			wall[j], cpu[j] = append(wall[j], wl), append(cpu[j], c)
		}
	}
	mw, mc := testenv.Median(wall[0]), testenv.Median(cpu[0])
	fmt.Printf("load average %s / %s; median of 200, interleaved:\n", before, la())
	for j, rn := range runs {
		hw, hc := testenv.Median(wall[j]), testenv.Median(cpu[j])
		fmt.Printf("  %-26s %8v (CPU %8v): wall %.2fx, CPU %.2fx the minimal program\n", rn.name, r(hw), r(hc), float64(hw)/float64(mw), float64(hc)/float64(mc))
	}
	b.ReportMetric(float64(testenv.Median(wall[1]))/float64(mw), "wall-hook/minimal")
	b.ReportMetric(float64(testenv.Median(cpu[1]))/float64(mc), "cpu-hook/minimal")
}
