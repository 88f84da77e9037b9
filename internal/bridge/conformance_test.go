//go:build unix

package bridge

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var scenarioLine = regexp.MustCompile(`(?m)^[✓✗] (\S+): (\d+) passed, (\d+) failed`)

// runConformance relays stdioCmd to Streamable HTTP with supergateway and
// runs the official conformance server suite against it. It returns each
// scenario's failed-check count.
func runConformance(t *testing.T, stdioCmd string, env []string) map[string]int {
	t.Helper()
	node := testenv.Node22Bin(t)
	relay := testenv.NPMBin(t, "supergateway", testenv.Supergateway)
	suite := testenv.NPMBin(t, "conformance", testenv.Conformance)
	port := testenv.FreePort(t)
	sg := exec.Command(node, relay, "--stdio", stdioCmd, "--outputTransport", "streamableHttp", "--stateful",
		"--port", strconv.Itoa(port), "--logLevel", "none")
	sg.Env = append(os.Environ(), env...)
	sg.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sg.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-sg.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { sg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-sg.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	if err := testenv.WaitListening("127.0.0.1:"+strconv.Itoa(port), 30*time.Second, nil); err != nil {
		t.Fatalf("supergateway: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", "http://127.0.0.1:"+strconv.Itoa(port)+"/mcp")
	out, err := cmd.CombinedOutput()
	res := map[string]int{}
	for _, m := range scenarioLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[3])
		res[m[1]] = n
	}
	if len(res) == 0 {
		t.Fatalf("conformance suite printed no results (%v):\n%s", err, out)
	}
	return res
}

// The official conformance server suite passes through the bridge: relay
// -> mcp-heal shim --url -> the Go SDK fixture over Streamable HTTP. The
// same relay in front of the same fixture over stdio, without mcp-heal,
// is the baseline: every scenario that passes there must pass through the
// bridge (dns-rebinding-protection checks the relay's own HTTP server,
// which does not validate Host; it fails in both runs).
func TestConformanceThroughBridge(t *testing.T) {
	fixture := testenv.GoInstall(t, testenv.GoSDKEverything)
	srv := newServer(t, goSDKStateful)
	bin := testenv.Binary(t)
	stateDir := t.TempDir()
	base := runConformance(t, fixture, nil)
	bridged := runConformance(t, bin+" shim --name conformance --url "+srv.URL, []string{"XDG_STATE_HOME=" + stateDir})

	var names []string
	for n := range base {
		names = append(names, n)
	}
	sort.Strings(names)
	passed, failed := 0, 0
	var lines []string
	for _, n := range names {
		b, ok := bridged[n]
		switch {
		case !ok:
			t.Errorf("scenario %s: missing from the bridged run", n)
		case base[n] == 0 && b != 0:
			t.Errorf("scenario %s: passes on the baseline, %d checks fail through the bridge", n, b)
		}
		if b == 0 {
			passed++
		} else {
			failed++
		}
		lines = append(lines, n+"="+strconv.Itoa(b))
	}
	t.Logf("through the bridge: %d scenarios pass, %d fail (failed checks: %s)", passed, failed, strings.Join(lines, " "))
	if len(bridged) < 25 {
		t.Errorf("only %d scenarios ran", len(bridged))
	}
}
