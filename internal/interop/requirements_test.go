//go:build unix

package interop

import (
	"fmt"
	"io"
	"net/http"
	"os"
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

// requirementSets are the frozen requirement sets of the conformance suite
// (testenv.ConformanceNext): each names the server scenarios a spec
// revision requires, plus the ones it runs without scoring (the tasks-*
// extension, pending scenarios), and runs them at that revision's wire
// (the initialize handshake for 2025-11-25, the stateless era for
// 2026-07-28).
var requirementSets = []string{"2025-11-25", "2026-07-28"}

// variants are the fixtures, each served one way: the Go SDK's conformance
// everything-server stateful (the relay's --stateful sessions; its own HTTP
// handler with -stateless=false) and stateless, and the TypeScript SDK's
// reference server, @modelcontextprotocol/server-everything, whose HTTP
// transport is stateful only (TestEverythingHTTPIsStatefulOnly), so it has
// no stateless variant: the http and bridge columns would have no server.
// Its name is fixture/mode.
var variants = []string{"go-sdk/stateful", "go-sdk/stateless", "ts-everything/stateful"}

// variantSets are the requirement sets run for a variant: every one, but
// the TypeScript server speaks no 2026-07-28 (its SDK release predates it).
func variantSets(v string) []string {
	if strings.HasPrefix(v, "ts-") {
		return requirementSets[:1]
	}
	return requirementSets
}

// runsSet reports whether the requirement set is run for the variant.
func runsSet(v, set string) bool {
	for _, s := range variantSets(v) {
		if s == set {
			return true
		}
	}
	return false
}

// TestEverythingHTTPIsStatefulOnly backs what docs/conformance.md says of
// the missing ts-everything/stateless table: server-everything's own
// Streamable HTTP transport hands out a session at initialize and refuses
// a request that comes without one, so it cannot serve the stateless
// variant. When a new pin of it serves such a request, this fails: the
// variant is then due.
func TestEverythingHTTPIsStatefulOnly(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	url := startEverythingHTTP(t, testenv.Node22Bin(t))
	post := func(body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		defer resp.Body.Close()
		// An SSE answer stays open: its first event is all this needs.
		b := make([]byte, 4096)
		n, _ := io.ReadAtLeast(resp.Body, b, 1)
		return resp, string(b[:n])
	}
	resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Server not initialized") {
		t.Errorf("tools/list without a session: %s %s; want 400 Server not initialized (a stateless server answers it: add ts-everything/stateless to variants)", resp.Status, body)
	}
	resp, body = post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"interop","version":"1"}}}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize: %s %s, session id %q; want 200 with an Mcp-Session-Id", resp.Status, body, resp.Header.Get("Mcp-Session-Id"))
	}
}

// The columns of the conformance table. "http" is the fixture's own
// Streamable HTTP server, the reference; the others reach the fixture over
// stdio through supergateway, which is the HTTP server the suite talks to:
// "direct" (relay -> fixture), "shim" (relay -> mcp-heal shim -> fixture),
// "shim+kill" (the same, the first server of every shim SIGKILLed once it
// has answered and is idle, so every scenario goes on with a respawned
// server) and "bridge" (relay ->
// mcp-heal shim --url -> the fixture's HTTP server).
const (
	colHTTP     = "http"
	colDirect   = "direct"
	colShim     = "shim"
	colShimKill = "shim+kill"
	colBridge   = "bridge"
)

var columns = []string{colHTTP, colDirect, colShim, colShimKill, colBridge}

// scenarioResult is one scenario of one run: its checks, and why it is not
// scored when the requirement set runs it without scoring.
type scenarioResult struct {
	passed, failed int
	notScored      string
	failedChecks   string
	reruns         int // how often it was run again alone (see TestConformanceRequirements)
}

func (r scenarioResult) ok() bool { return r.failed == 0 }

// setResult is one run of a requirement set: per scenario, its result.
type setResult map[string]scenarioResult

func (r setResult) passing() int {
	n := 0
	for _, s := range r {
		if s.ok() {
			n++
		}
	}
	return n
}

var notScoredLine = regexp.MustCompile(`(?m)^  [✓✗] (\S+) \(([a-z-]+)\)$`)

// runRequirements runs one requirement set against url and parses its
// summary.
func runRequirements(t *testing.T, node, conformance, url, set, outDir string) setResult {
	t.Helper()
	out, sums := runServerSuite(t, node, conformance, url, "--requirements "+set, 8*time.Minute, "--requirements", set, "-o", outDir)
	res := setResult{}
	for _, s := range sums {
		r := scenarioResult{passed: s.passed, failed: s.failed}
		if s.failed > 0 {
			r.failedChecks = failedChecks(outDir, s.name)
		}
		res[s.name] = r
	}
	for _, m := range notScoredLine.FindAllStringSubmatch(out, -1) {
		if r, ok := res[m[1]]; ok {
			r.notScored = m[2]
			res[m[1]] = r
		}
	}
	return res
}

// runScenario runs one scenario alone at the wire of a requirement set.
func runScenario(t *testing.T, node, conformance, url, set, scenario, outDir string) scenarioResult {
	t.Helper()
	out, _, _ := runConformance(3*time.Minute, node, conformance, "server", "--url", url, "--scenario", scenario, "--spec-version", set, "-o", outDir)
	r, ok := aloneResult(out, scenario)
	if !ok {
		return scenarioResult{failed: 1, failedChecks: "no result when run alone: " + string(out)}
	}
	if r.failed > 0 {
		r.failedChecks = failedChecks(outDir, scenario)
	}
	return r
}

// aloneLine is the summary of one scenario run alone (`--scenario X`):
// "Passed: 28/28, 0 failed, 2 warnings" under "Test Results:".
var aloneLine = regexp.MustCompile(`(?m)^Passed: (\d+)/\d+, (\d+) failed`)

// aloneResult reads the counts of scenario from the output of a run of it
// alone: its own summary line, or the one a set run prints for it.
func aloneResult(out []byte, scenario string) (scenarioResult, bool) {
	for _, m := range summaryLine.FindAllStringSubmatch(string(out), -1) {
		if m[1] == scenario {
			p, _ := strconv.Atoi(m[2])
			f, _ := strconv.Atoi(m[3])
			return scenarioResult{passed: p, failed: f}, true
		}
	}
	if m := aloneLine.FindStringSubmatch(string(out)); m != nil {
		p, _ := strconv.Atoi(m[1])
		f, _ := strconv.Atoi(m[2])
		return scenarioResult{passed: p, failed: f}, true
	}
	return scenarioResult{}, false
}

// TestAloneResult: the counts of a scenario run alone are read from what
// the suite prints then. testdata/conformance-scenario-alone.txt is the
// output of `conformance server --scenario server-stateless` (0.2.0-alpha.12,
// through shim+kill, from a CI run of TestConformanceRequirements on
// 2026-11-23); before aloneResult read its "Passed: N/M" line, every
// scenario run again alone counted as failed with "no result".
func TestAloneResult(t *testing.T) {
	out, err := os.ReadFile("testdata/conformance-scenario-alone.txt")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := aloneResult(out, "server-stateless"); !ok || r.passed != 28 || r.failed != 0 || !r.ok() {
		t.Errorf("alone: got %+v, %v; want 28 passed, 0 failed", r, ok)
	}
	set := []byte("✓ server-initialize: 3 passed, 0 failed\n✗ server-stateless: 26 passed, 2 failed\n")
	if r, ok := aloneResult(set, "server-stateless"); !ok || r.passed != 26 || r.failed != 2 {
		t.Errorf("set summary: got %+v, %v; want 26 passed, 2 failed", r, ok)
	}
	if _, ok := aloneResult([]byte("Error: connect ECONNREFUSED\n"), "server-stateless"); ok {
		t.Error("no summary at all: got a result")
	}
}

// requirementsRun is the measurement the table is made of:
// set -> fixture mode -> column -> result.
type requirementsRun map[string]map[string]map[string]setResult

// TestConformanceRequirements runs every server scenario of both
// requirement sets of the newest conformance suite (with the tasks-*
// extension and the pending scenarios the sets run without scoring)
// against the Go SDK's conformance fixture in each column (see columns),
// with the fixture served stateful and stateless, and checks that the shim,
// the shim with kills and the bridge pass every scenario that passes
// without them. With -conformance-report it writes the table into
// docs/conformance.md; without, it checks the doc's pass counts are the
// ones measured.
func TestConformanceRequirements(t *testing.T) {
	fullSuiteOnly(t)
	t.Parallel()
	testenv.TimingSensitive(t)
	node, conformance, supergateway := conformanceKit(t, npmConformanceNextPkgs...)
	goStdio, tsStdio := goFixture(t), tsEverything(t)
	bin := testenv.Binary(t)
	wrapper := killAfter(t)

	run := requirementsRun{}
	for _, set := range requirementSets {
		run[set] = map[string]map[string]setResult{}
		for _, mode := range variants {
			run[set][mode] = map[string]setResult{}
		}
	}
	kills := map[string]string{}
	for _, mode := range variants {
		kills[mode] = t.TempDir()
	}
	// At most three suites at a time: each is a node process driving
	// relays, shims and fixtures, on machines with few cores.
	sem := make(chan struct{}, 3)
	var mu sync.Mutex
	t.Run("run", func(t *testing.T) {
		// The fixtures' HTTP servers and the relays live for both phases.
		urls := map[string]string{} // variant+" "+column -> URL
		for _, mode := range variants {
			stateful := strings.HasSuffix(mode, "/stateful")
			var fixture, fixtureURL string
			if strings.HasPrefix(mode, "go-sdk/") {
				fixture = goStdio
				fixtureURL = startGoFixtureHTTP(t, stateful)
			} else {
				fixture = tsStdio
				fixtureURL = startEverythingHTTP(t, node)
			}
			// $PPID is the shim: the first start under each shim makes its
			// marker and runs the fixture under testdata/killafter, so it
			// dies once it has answered; the shim's respawns run the
			// fixture alone.
			selfKill := `sh -c 'mkdir "$0/$PPID" 2>/dev/null && exec "$2" "$0/$PPID" "$1"; exec "$1"' ` +
				kills[mode] + " " + fixture + " " + wrapper
			stdio := map[string]string{
				colDirect:   fixture,
				colShim:     bin + " shim --name fixture -- " + fixture,
				colShimKill: bin + " shim --name fixture -- " + selfKill,
				colBridge:   bin + " shim --name fixture --url " + fixtureURL,
			}
			urls[mode+" "+colHTTP] = fixtureURL
			for _, col := range columns[1:] {
				urls[mode+" "+col] = startRelay(t, node, supergateway, stdio[col], t.TempDir(), stateful)
			}
		}
		t.Run("suites", func(t *testing.T) {
			for _, mode := range variants {
				for _, col := range columns {
					t.Run(mode+"/"+col, func(t *testing.T) {
						t.Parallel()
						for _, set := range variantSets(mode) {
							sem <- struct{}{}
							r := runRequirements(t, node, conformance, urls[mode+" "+col], set, filepath.Join(t.TempDir(), "out"))
							<-sem
							mu.Lock()
							run[set][mode][col] = r
							mu.Unlock()
						}
					})
				}
			}
		})
		if t.Failed() {
			return
		}
		// A scenario that fails through the shim or the bridge but passes
		// without them is run again alone, at most twice: a few checks give
		// the server 500 ms from request to first frame, and in the relay's
		// stateless mode that includes starting a shim and its server per
		// request, which a loaded machine can exceed. The table says so.
		rerun := func(t *testing.T, mode, col, set, name string, sr scenarioResult) {
			for attempt := 1; attempt <= 2 && !sr.ok(); attempt++ {
				again := runScenario(t, node, conformance, urls[mode+" "+col], set, name, filepath.Join(t.TempDir(), "out"))
				t.Logf("%s %s %s: %s failed (%s); run alone again: %d passed, %d failed", set, mode, col, name, sr.failedChecks, again.passed, again.failed)
				again.notScored, again.reruns = sr.notScored, attempt
				sr = again
			}
			mu.Lock()
			run[set][mode][col][name] = sr
			mu.Unlock()
		}
		// The same goes for a failure without mcp-heal that the docs do not
		// explain (a baseline failure is not run again).
		t.Run("again-without", func(t *testing.T) {
			for _, mode := range variants {
				for _, col := range []string{colHTTP, colDirect} {
					t.Run(mode+"/"+col, func(t *testing.T) {
						t.Parallel()
						for _, set := range variantSets(mode) {
							mu.Lock()
							r := run[set][mode][col]
							mu.Unlock()
							for name, sr := range r {
								if !sr.ok() && explain(set, mode, col, name) == "" {
									rerun(t, mode, col, set, name, sr)
								}
							}
						}
					})
				}
			}
		})
		t.Run("again", func(t *testing.T) {
			for _, mode := range variants {
				for _, col := range []string{colShim, colShimKill, colBridge} {
					t.Run(mode+"/"+col, func(t *testing.T) {
						t.Parallel()
						for _, set := range variantSets(mode) {
							mu.Lock()
							r := run[set][mode][col]
							direct, http := run[set][mode][colDirect], run[set][mode][colHTTP]
							mu.Unlock()
							for name, sr := range r {
								if sr.ok() || !direct[name].ok() || (col == colBridge && !http[name].ok()) {
									continue
								}
								rerun(t, mode, col, set, name, sr)
							}
						}
					})
				}
			}
		})
	})
	if t.Failed() {
		return
	}
	for _, mode := range variants {
		killed, _ := filepath.Glob(filepath.Join(kills[mode], "*", "killed"))
		scenarios := 0
		for _, set := range requirementSets {
			scenarios += len(run[set][mode][colShimKill])
		}
		t.Logf("%s shim+kill: %d server processes SIGKILLed after their first answer, for %d scenarios", mode, len(killed), scenarios)
		if len(killed) < scenarios {
			t.Errorf("%s shim+kill: %d server processes killed, want at least one per scenario (%d)", mode, len(killed), scenarios)
		}
	}
	problems := run.check()
	for _, p := range problems {
		t.Error(p)
	}
	table := run.table()
	t.Logf("conformance %s:\n%s", testenv.ConformanceNext, table)
	doc := filepath.Join(testenv.ModuleRoot(t), "docs", "conformance.md")
	if *conformanceReport {
		if len(problems) > 0 {
			return // a failed run's table does not go into the docs
		}
		if err := replaceSection(doc, conformanceBegin, conformanceEnd, table); err != nil {
			t.Fatal(err)
		}
		return
	}
	checkDocCounts(t, doc, run)
}

// check returns what the run shows wrong: a scenario that fails in a column
// but passes where it should fail too (the shim columns against direct; the
// bridge against both direct, for the relay, and http, for the fixture's
// HTTP server), a column that ran a different set of scenarios, and a
// failure the docs do not explain.
func (run requirementsRun) check() []string {
	var out []string
	for _, set := range requirementSets {
		for _, mode := range variants {
			if !runsSet(mode, set) {
				continue
			}
			cols := run[set][mode]
			for _, col := range columns {
				for name, r := range cols[col] {
					if _, ok := cols[colDirect][name]; !ok && col != colHTTP {
						out = append(out, fmt.Sprintf("%s %s %s: scenario %s did not run directly", set, mode, col, name))
					}
					if r.ok() {
						continue
					}
					direct, http := cols[colDirect][name], cols[colHTTP][name]
					switch col {
					case colShim, colShimKill:
						if direct.ok() {
							out = append(out, fmt.Sprintf("%s %s: %s fails through %s but passes directly: %s", set, mode, name, col, r.failedChecks))
						}
					case colBridge:
						if direct.ok() && http.ok() {
							out = append(out, fmt.Sprintf("%s %s: %s fails through the bridge but passes directly and over the fixture's HTTP: %s", set, mode, name, r.failedChecks))
						}
					}
					if explain(set, mode, col, name) == "" {
						out = append(out, fmt.Sprintf("%s %s %s: failure of %s not explained in failureReasons: %s", set, mode, col, name, r.failedChecks))
					}
				}
			}
			for _, col := range columns[1:] {
				if len(cols[col]) != len(cols[colDirect]) {
					out = append(out, fmt.Sprintf("%s %s: %d scenarios ran through %s, %d directly", set, mode, len(cols[col]), col, len(cols[colDirect])))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// scenarios returns the scenario names of a set and mode, in the order of
// the requirement set's summary (alphabetical within scored and not
// scored).
func (run requirementsRun) scenarios(set, mode string) []string {
	seen := map[string]bool{}
	for _, col := range columns {
		for name := range run[set][mode][col] {
			seen[name] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	ns := func(n string) string { return run[set][mode][colDirect][n].notScored }
	sort.Slice(names, func(i, j int) bool {
		a, b := ns(names[i]) != "", ns(names[j]) != ""
		if a != b {
			return !a
		}
		return names[i] < names[j]
	})
	return names
}

// table renders the run as the markdown that goes into the docs.
func (run requirementsRun) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured with `%s` against the fixtures go-sdk (`%s`) and ts-everything (`%s`, stdio and `streamableHttp`).\n", testenv.ConformanceNext, testenv.GoSDKEverything, testenv.ServerEverything)
	for _, set := range requirementSets {
		for _, mode := range variants {
			if !runsSet(mode, set) {
				continue
			}
			cols := run[set][mode]
			fmt.Fprintf(&b, "\n### Requirement set %s, fixture %s\n\n", set, mode)
			b.WriteString("| scenario | " + strings.Join(columns, " | ") + " |\n|---|")
			b.WriteString(strings.Repeat("---|", len(columns)) + "\n")
			var failures []string
			failedIn := map[string][]string{} // scenario and reason -> columns
			for _, name := range run.scenarios(set, mode) {
				label := name
				if ns := cols[colDirect][name].notScored; ns != "" {
					label += " (not scored: " + ns + ")"
				}
				b.WriteString("| " + label + " |")
				for _, col := range columns {
					r, ok := cols[col][name]
					switch {
					case !ok:
						b.WriteString(" not run |")
					case r.ok() && r.passed == 0:
						b.WriteString(" ✓ 0 (no check ran) |")
					case r.ok() && r.reruns > 0:
						fmt.Fprintf(&b, " ✓ %d (run alone: %d) |", r.passed, r.reruns)
					case r.ok():
						fmt.Fprintf(&b, " ✓ %d |", r.passed)
					default:
						fmt.Fprintf(&b, " ✗ %d/%d |", r.passed, r.passed+r.failed)
						key := name + "\x00" + explain(set, mode, col, name)
						if failedIn[key] == nil {
							failures = append(failures, key)
						}
						failedIn[key] = append(failedIn[key], col)
					}
				}
				b.WriteString("\n")
			}
			b.WriteString("| **scenarios passing** |")
			for _, col := range columns {
				fmt.Fprintf(&b, " %d of %d |", cols[col].passing(), len(cols[col]))
			}
			b.WriteString("\n")
			if len(failures) > 0 {
				b.WriteString("\nFailures:\n\n")
				for _, key := range failures {
					name, why, _ := strings.Cut(key, "\x00")
					fmt.Fprintf(&b, "- %s (%s): %s\n", name, strings.Join(failedIn[key], ", "), why)
				}
			}
		}
	}
	return b.String()
}

// checkDocCounts checks that the docs' table has, for every requirement
// set, fixture mode and column, the pass count measured now.
func checkDocCounts(t *testing.T, doc string, run requirementsRun) {
	t.Helper()
	section := docSection(t, doc, conformanceBegin, conformanceEnd)
	heading := regexp.MustCompile(`(?m)^### Requirement set (\S+), fixture (\S+)$`)
	total := regexp.MustCompile(`(?m)^\| \*\*scenarios passing\*\* \|(.*)\|$`)
	parts := heading.FindAllStringSubmatchIndex(section, -1)
	seen := 0
	for k, p := range parts {
		set, mode := section[p[2]:p[3]], section[p[4]:p[5]]
		end := len(section)
		if k+1 < len(parts) {
			end = parts[k+1][0]
		}
		m := total.FindStringSubmatch(section[p[1]:end])
		if m == nil || run[set] == nil || run[set][mode] == nil {
			t.Errorf("docs/conformance.md: no pass counts for %s %s (or a set this test does not run)", set, mode)
			continue
		}
		seen++
		cells := strings.Split(m[1], "|")
		for i, col := range columns {
			want := fmt.Sprintf("%d of %d", run[set][mode][col].passing(), len(run[set][mode][col]))
			if i >= len(cells) || strings.TrimSpace(cells[i]) != want {
				t.Errorf("docs/conformance.md %s %s %s: the doc says %q, measured %q: run go test ./internal/interop -run TestConformanceRequirements -args -conformance-report", set, mode, col, strings.TrimSpace(cells[min(i, len(cells)-1)]), want)
			}
		}
	}
	want := 0
	for _, v := range variants {
		want += len(variantSets(v))
	}
	if seen != want {
		t.Errorf("docs/conformance.md has %d tables, want %d: run go test ./internal/interop -run TestConformanceRequirements -args -conformance-report", seen, want)
	}
}
