//go:build unix

package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// notForAProxy says why a client scenario of the requirement sets is not
// run through the bridge. Every other client scenario is.
func notForAProxy(scenario string) string {
	if strings.HasPrefix(scenario, "auth/") {
		return "OAuth: the scenario judges a client that discovers the authorization server, registers and obtains a token itself (DCR, CIMD, PKCE, client credentials, DPoP, token refresh); the bridge does no OAuth by design: Claude Code runs OAuth for remote servers itself and `wrap` leaves OAuth servers unwrapped; a configured header or token (--header, --header-env) is sent as given, and no scenario hands the client a static token"
	}
	return ""
}

var clientListItem = regexp.MustCompile(`(?m)^  - (\S+)$|^    - (\S+) \[client\]$`)

// clientScenarios lists the client scenarios of a requirement set, scored
// and not.
func clientScenarios(t *testing.T, node, conformance, set string) []string {
	t.Helper()
	out, err := exec.Command(node, conformance, "list", "--requirements", set).CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --requirements %s: %v\n%s", set, err, out)
	}
	text := string(out)
	i := strings.Index(text, "Client scenarios")
	if i < 0 {
		t.Fatalf("conformance list --requirements %s: no client scenarios:\n%s", set, out)
	}
	var names []string
	for _, m := range clientListItem.FindAllStringSubmatch(text[i:], -1) {
		names = append(names, m[1]+m[2])
	}
	return names
}

var clientPassed = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

// clientResult is one client scenario through the bridge.
type clientResult struct {
	passed, total int
	skipped       string // why it is not run
	detail        string
}

// TestBridgeClientScenarios runs the client scenarios of both requirement
// sets that apply to a proxy with the bridge as the client under test: the
// suite's scenario server on one side, `mcp-heal shim --url` in the middle,
// and on stdio the driver (driver_test.go) doing what the suite's reference
// client does. Every scenario that applies must pass; the others are listed
// with the reason. With -conformance-report the results go into
// docs/conformance.md.
func TestBridgeClientScenarios(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	node, conformance, _ := conformanceKit(t, npmConformanceNextPkgs...)
	bin := testenv.Binary(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	command := "env " + roleEnv + "=client-driver " + self + " " + bin

	results := map[string]map[string]clientResult{}
	var mu sync.Mutex
	sem := make(chan struct{}, 3)
	t.Run("run", func(t *testing.T) {
		for _, set := range requirementSets {
			results[set] = map[string]clientResult{}
			for _, sc := range clientScenarios(t, node, conformance, set) {
				if why := notForAProxy(sc); why != "" {
					results[set][sc] = clientResult{skipped: why}
					continue
				}
				t.Run(set+"/"+sc, func(t *testing.T) {
					t.Parallel()
					sem <- struct{}{}
					defer func() { <-sem }()
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					out, _ := exec.CommandContext(ctx, node, conformance, "client", "--command", command, "--scenario", sc,
						"--spec-version", set, "-o", t.TempDir()).CombinedOutput()
					m := clientPassed.FindStringSubmatch(string(out))
					if m == nil {
						t.Errorf("%s %s: no result:\n%s", set, sc, out)
						return
					}
					p, _ := strconv.Atoi(m[1])
					n, _ := strconv.Atoi(m[2])
					r := clientResult{passed: p, total: n}
					if p < n {
						r.detail = failedLines(string(out))
						t.Errorf("%s %s through the bridge: %d of %d checks passed:\n%s", set, sc, p, n, out)
					}
					mu.Lock()
					results[set][sc] = r
					mu.Unlock()
				})
			}
		}
	})
	if t.Failed() {
		return
	}
	table := clientTable(results)
	t.Logf("client scenarios through the bridge:\n%s", table)
	doc := filepath.Join(testenv.ModuleRoot(t), "docs", "conformance.md")
	if *conformanceReport {
		if err := replaceSection(doc, clientBegin, clientEnd, table); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	section, err := sectionOf(string(b), clientBegin, clientEnd)
	if err != nil {
		t.Fatal(err)
	}
	if section != table {
		t.Errorf("docs/conformance.md's client table is not what was measured: run go test ./internal/interop -run TestBridgeClientScenarios -args -conformance-report")
	}
}

// docs/conformance.md's generated client table stands between these.
const (
	clientBegin = "<!-- BEGIN conformance client -->\n"
	clientEnd   = "<!-- END conformance client -->\n"
)

// failedLines keeps the FAILURE lines of a client run's output.
func failedLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "FAILURE") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// clientTable renders the client results for the docs.
func clientTable(results map[string]map[string]clientResult) string {
	var b strings.Builder
	for _, set := range requirementSets {
		fmt.Fprintf(&b, "\n### Client scenarios, requirement set %s: the bridge as the client\n\n| scenario | through the bridge |\n|---|---|\n", set)
		var skipped []string
		names := make([]string, 0, len(results[set]))
		for n := range results[set] {
			names = append(names, n)
		}
		sort.Strings(names)
		ran, passed := 0, 0
		for _, n := range names {
			r := results[set][n]
			if r.skipped != "" {
				skipped = append(skipped, n)
				continue
			}
			ran++
			mark := "✓"
			if r.passed < r.total {
				mark = "✗"
			} else {
				passed++
			}
			fmt.Fprintf(&b, "| %s | %s %d/%d checks |\n", n, mark, r.passed, r.total)
		}
		fmt.Fprintf(&b, "| **scenarios passing** | %d of %d |\n", passed, ran)
		if len(skipped) > 0 {
			fmt.Fprintf(&b, "\nNot run (do not apply to a proxy): %s. Why: %s.\n", strings.Join(skipped, ", "), notForAProxy(skipped[0]))
		}
	}
	return b.String()
}
