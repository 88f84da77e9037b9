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

// BenchmarkHookStart: `mcp-heal hook PreToolUse` (healthy path), the whole
// process, against a minimal Go program that reads its stdin, both built
// as a release is (CGO_ENABLED=0, -trimpath), interleaved, 200 runs each;
// medians of wall time and CPU time, and the load average.
//
//	go test -run XXX -bench HookStart -benchtime 1x ./internal/hook
func BenchmarkHookStart(b *testing.B) {
	dir := b.TempDir()
	bin, minimal := filepath.Join(dir, "mcp-heal"), filepath.Join(dir, "minimal")
	for _, c := range [][]string{
		{"build", "-trimpath", "-o", bin, "./cmd/mcp-heal"},
		{"build", "-trimpath", "-o", minimal, "./internal/hook/testdata/minimal"},
	} {
		cmd := exec.Command("go", c...)
		cmd.Dir = testenv.ModuleRoot(b)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	w, payload := healthyWorld(b)
	env := w.env()
	la := func() string {
		l, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(l))[:3], " ")
	}
	before := la()
	var wall, cpu [2][]time.Duration
	for range 200 {
		for j, args := range [][]string{{minimal}, {bin, "hook", "PreToolUse"}} {
			wl, c := timeExec(b, env, payload, args[0], args[1:]...)
			wall[j], cpu[j] = append(wall[j], wl), append(cpu[j], c)
		}
	}
	mw, hw := testenv.Median(wall[0]), testenv.Median(wall[1])
	mc, hc := testenv.Median(cpu[0]), testenv.Median(cpu[1])
	fmt.Printf("load average %s / %s; median of 200: minimal Go program %v (CPU %v), hook PreToolUse %v (CPU %v): wall %.2fx, CPU %.2fx\n",
		before, la(), r(mw), r(mc), r(hw), r(hc), float64(hw)/float64(mw), float64(hc)/float64(mc))
	b.ReportMetric(float64(hw)/float64(mw), "wall-hook/minimal")
	b.ReportMetric(float64(hc)/float64(mc), "cpu-hook/minimal")
}
