//go:build unix

package e2e

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

var (
	reportFlag = flag.Bool("report", false, "also run the scenarios with Claude Code alone, print the comparison table and write it into docs/end-to-end.md")
	reportOnly = flag.String("report-only", "", "with -report, run only the scenarios whose row name matches this regular expression; the other rows keep what the doc holds")
)

// The table stands in docs/end-to-end.md between these markers (the doc
// holds other generated tables, each between its own markers); the one
// measured with the newest release (MCP_HEAL_CLAUDE_CODE=2.1.332) between
// markers of its own.
const reportDoc = "docs/end-to-end.md"

func reportMarkers(t *testing.T) (begin, end string) {
	if claudeCodePackage(t) == testenv.ClaudeCode332 {
		return "<!-- BEGIN scenarios 2.1.332 -->\n", "<!-- END scenarios 2.1.332 -->\n"
	}
	return "<!-- BEGIN scenarios -->\n", "<!-- END scenarios -->\n"
}

// reportRow is one scenario of the comparison table: run with Claude Code
// alone and in the mode that stands for "with mcp-heal".
type reportRow struct {
	name string
	with mode
	run  func(t *testing.T, m mode) outcome
}

var reportRows = []reportRow{
	{"1. stdio server SIGKILLed between calls", healed, scenarioKilledBetweenCalls},
	{"2. stdio server SIGKILLed during a non-idempotent, then a read-only call (`-p`)", healed, func(t *testing.T, m mode) outcome { return scenarioKilledDuringCall(t, m, false) }},
	{"2. the same, interactive session", healed, func(t *testing.T, m mode) outcome { return scenarioKilledDuringCall(t, m, true) }},
	{"3. stdio server dies, then fails to start 3 times before it works (`-p`)", healed, func(t *testing.T, m mode) outcome { return scenarioFailingStarts(t, m, false) }},
	{"3. the same, interactive session", healed, func(t *testing.T, m mode) outcome { return scenarioFailingStarts(t, m, true) }},
	{"4. stdio server hangs (SIGSTOP)", healed, scenarioHung},
	{"4. stdio server deaf while running (no answers, pings included)", healed, scenarioDeaf},
	{"5. HTTP server (server-everything) restarted, old session gone: bridge", healed, scenarioHTTPRestart},
	{"5. the same, unwrapped: hooks only", hooksOnly, scenarioHTTPRestart},
	{"6. three MCP servers on one port restarted", healed, scenarioNamespaces},
	{"7. unwrapped stdio server dies, respawn fails (`-p`): hooks only", hooksOnly, func(t *testing.T, m mode) outcome { return scenarioRespawnFailed(t, m, false) }},
	{"7. the same, interactive session", hooksOnly, func(t *testing.T, m mode) outcome { return scenarioRespawnFailed(t, m, true) }},
	{"8. shim killed by Claude Code, stateful server (`--keep`)", healed, scenarioKeptShimKilled},
	{"10. single-threaded stateful server waiting on I/O, its call cancelled at Claude Code's tool time-out (`-p`)", healed, scenarioCancelledWait},
	{"10. the same, cancelled by the user's Esc (interactive)", healed, scenarioCancelledEsc},
	{"11. stdio server exits with code 0 after 8 s idle; 60 s idle between two calls (interactive)", healed, scenarioIdleExit},
	{"12. stdio server SIGKILLed 4 MB into an 8 MiB answer (`-p`)", healed, scenarioCutAnswer},
	{"13. stdio server with a stopped child of its own; a 4 s call (`-p`)", healed, scenarioStoppedChild},
	{"14. shim and server stopped together for 15 s after a cancelled call, `--hang-after 5s` (`-p`)", healed, scenarioStoppedTogether},
}

// TestReport, with -report, runs every scenario with Claude Code alone and
// with mcp-heal, prints the comparison table and writes it into
// docs/end-to-end.md:
//
//	go test ./internal/e2e -run TestReport -v -args -report
//
// -report-only REGEXP runs only the matching rows and keeps the others as
// the doc has them (say so beside the table: they come from another run).
//
// Without -report it checks that the doc's table has one row for every
// scenario of the report, in order, so the doc cannot drift from it.
func TestReport(t *testing.T) {
	reportBegin, reportEnd := reportMarkers(t)
	doc := readDocTable(t, reportDoc, reportBegin, reportEnd)
	var rows []string
	for _, l := range strings.Split(doc.text(), "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| scenario ") {
			rows = append(rows, l)
		}
	}
	if !*reportFlag {
		if len(rows) != len(reportRows) {
			t.Fatalf("%s: the table has %d rows, the report %d: run go test ./internal/e2e -run TestReport -args -report", reportDoc, len(rows), len(reportRows))
		}
		for k, row := range reportRows {
			if !strings.HasPrefix(rows[k], "| "+row.name+" | ") {
				t.Errorf("%s: row %d is %q, want scenario %q", reportDoc, k+1, rows[k], row.name)
			}
		}
		return
	}
	only := regexp.MustCompile(*reportOnly)
	kept := map[string]string{} // rows not run this time: as the doc has them
	for _, row := range reportRows {
		if only.MatchString(row.name) {
			continue
		}
		for _, l := range rows {
			if strings.HasPrefix(l, "| "+row.name+" | ") {
				kept[row.name] = l
			}
		}
		if kept[row.name] == "" {
			t.Fatalf("%s has no row %q to keep: run it too (-report-only)", reportDoc, row.name)
		}
	}
	got := make([][2]outcome, len(reportRows))
	t.Run("group", func(t *testing.T) {
		for i, row := range reportRows {
			if kept[row.name] != "" {
				continue
			}
			for j, m := range []mode{alone, row.with} {
				t.Run(fmt.Sprintf("%d/%s", i, m), func(t *testing.T) {
					t.Parallel()
					got[i][j] = row.run(t, m)
				})
			}
		}
	})
	var b strings.Builder
	b.WriteString("| scenario | Claude Code alone | with mcp-heal |\n|---|---|---|\n")
	for i, row := range reportRows {
		if l := kept[row.name]; l != "" {
			b.WriteString(l + "\n")
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row.name, cell(got[i][0]), cell(got[i][1]))
	}
	doc.publish(t, b.String()) // a failed scenario's numbers do not go into the doc
}

// cell renders an outcome for the table.
func cell(o outcome) string {
	s := fmt.Sprintf("%d of %d calls failed; ", o.Failed, o.Calls)
	if o.Recovery < 0 {
		s += "never recovered in the session"
	} else {
		s += "working again after " + fmtDur(o.Recovery)
	}
	if o.Note != "" {
		s += " (" + o.Note + ")"
	}
	return s
}
