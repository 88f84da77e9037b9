//go:build unix

package interop

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestBridgeStatelessScenariosKilledBetween: every server scenario the
// 2026-07-28 requirement set requires, run one by one at that wire
// through the bridge (supergateway -> `mcp-heal shim --url` -> the Go SDK
// fixture's stateless HTTP server, the table's bridge column), with the
// fixture SIGKILLed and started again on the same port before every
// scenario, side by side with the same bridge in front of a fixture that
// is never killed. A scenario that passes without the kills must pass
// with them.
//
// What the kill reaches: the relay runs without --stateful, as in the
// table's stateless rows, so it starts one bridge per request and no
// bridge process lives across a kill; what does is the relay, the
// bridge's state dir, and the remote the bridge names. Kills during a
// request, through one bridge process, are internal/bridge's
// TestShimStatelessLostStream and TestShimStatelessMRTRKilled.
func TestBridgeStatelessScenariosKilledBetween(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	testenv.TimingSensitive(t)
	const set = "2026-07-28"
	node, conformance, supergateway := conformanceKit(t, npmConformanceNextPkgs...)
	fixture := goFixture(t)
	bin := testenv.Binary(t)
	scenarios, _ := listScenarios(t, node, conformance, set)

	steady := startGoFixtureHTTP(t, false)
	// The fixture serving the stateless era on one port, which the test
	// kills and starts again there.
	killed := newRemote(t, "fixture", "/mcp", func(port int) *exec.Cmd {
		return exec.Command(fixture, "-http=127.0.0.1:"+strconv.Itoa(port), "-stateless=true")
	})
	bridge := func(url string) string {
		return startRelay(t, node, supergateway, bin+" shim --name fixture --url "+url, t.TempDir(), false)
	}
	plainURL, killURL := bridge(steady), bridge(killed.url())

	var report strings.Builder
	fmt.Fprintf(&report, "%-48s %-10s %-10s\n", "scenario", "bridge", "bridge+kill")
	passPlain, passKill := 0, 0
	for _, name := range scenarios {
		plain := runScenario(t, node, conformance, plainURL, set, name, filepath.Join(t.TempDir(), "out"))
		killed.restart(syscall.SIGKILL)
		withKill := runScenario(t, node, conformance, killURL, set, name, filepath.Join(t.TempDir(), "out"))
		cell := func(r scenarioResult) string {
			if r.ok() {
				return fmt.Sprintf("✓ %d", r.passed)
			}
			return fmt.Sprintf("✗ %d/%d", r.passed, r.passed+r.failed)
		}
		fmt.Fprintf(&report, "%-48s %-10s %-10s\n", name, cell(plain), cell(withKill))
		if plain.ok() {
			passPlain++
		}
		if withKill.ok() {
			passKill++
		}
		if plain.ok() && !withKill.ok() {
			t.Errorf("%s passes through the bridge but fails with the server killed and restarted before it: %s", name, withKill.failedChecks)
		}
	}
	fmt.Fprintf(&report, "passing: %d of %d through the bridge, %d of %d with the server killed before each (%d starts of it)\n",
		passPlain, len(scenarios), passKill, len(scenarios), killed.starts)
	t.Logf("requirement set %s, one scenario at a time:\n%s", set, report.String())
	if killed.starts != len(scenarios)+1 {
		t.Errorf("the fixture was started %d times for %d scenarios, want one start more than scenarios", killed.starts, len(scenarios))
	}
	if passPlain == 0 {
		t.Error("no scenario passed through the bridge: the comparison shows nothing")
	}
}
