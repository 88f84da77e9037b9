//go:build unix

package interop

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// restartable is the Go SDK fixture serving the stateless era over
// Streamable HTTP on one port, which a test kills and starts again there.
type restartable struct {
	t       *testing.T
	fixture string
	port    int
	cmd     *exec.Cmd
	exited  chan struct{}
	starts  []int // the pid of every start
}

func (r *restartable) url() string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", r.port) }

// start starts the fixture on its port and waits until it answers there.
func (r *restartable) start() {
	r.t.Helper()
	cmd := exec.Command(r.fixture, "-http=127.0.0.1:"+strconv.Itoa(r.port), "-stateless=true")
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start the fixture: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	r.cmd, r.exited = cmd, exited
	r.starts = append(r.starts, cmd.Process.Pid)
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-exited:
			r.t.Fatalf("the fixture exited on start %d (port %d taken?)", len(r.starts), r.port)
		default:
		}
		if resp, err := client.Get(r.url()); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("the fixture did not answer on port %d within 30 s", r.port)
}

// kill SIGKILLs the running fixture and waits for it to be gone.
func (r *restartable) kill() {
	r.t.Helper()
	if err := syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		r.t.Fatalf("kill -9 the fixture %d: %v", r.cmd.Process.Pid, err)
	}
	<-r.exited
}

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
	killed := &restartable{t: t, fixture: fixture, port: testenv.FreePort(t)}
	killed.start()
	t.Cleanup(func() { killed.kill() })
	bridge := func(url string) string {
		return startRelay(t, node, supergateway, bin+" shim --name fixture --url "+url, t.TempDir(), false)
	}
	plainURL, killURL := bridge(steady), bridge(killed.url())

	var report strings.Builder
	fmt.Fprintf(&report, "%-48s %-10s %-10s\n", "scenario", "bridge", "bridge+kill")
	passPlain, passKill := 0, 0
	for _, name := range scenarios {
		plain := runScenario(t, node, conformance, plainURL, set, name, filepath.Join(t.TempDir(), "out"))
		killed.kill()
		killed.start()
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
		passPlain, len(scenarios), passKill, len(scenarios), len(killed.starts))
	t.Logf("requirement set %s, one scenario at a time:\n%s", set, report.String())
	if len(killed.starts) != len(scenarios)+1 {
		t.Errorf("the fixture was started %d times for %d scenarios, want one start more than scenarios", len(killed.starts), len(scenarios))
	}
	if passPlain == 0 {
		t.Error("no scenario passed through the bridge: the comparison shows nothing")
	}
}
