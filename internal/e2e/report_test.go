package e2e

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var reportFlag = flag.Bool("report", false, "also run the scenarios with Claude Code alone and print the README's comparison table")

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
	{"5. HTTP server (server-everything) restarted, old session gone: bridge", healed, scenarioHTTPRestart},
	{"5. the same, unwrapped: hooks only", hooksOnly, scenarioHTTPRestart},
	{"6. three MCP servers on one port restarted", healed, scenarioNamespaces},
	{"7. unwrapped stdio server dies, respawn fails (`-p`): hooks only", hooksOnly, func(t *testing.T, m mode) outcome { return scenarioRespawnFailed(t, m, false) }},
	{"7. the same, interactive session", hooksOnly, func(t *testing.T, m mode) outcome { return scenarioRespawnFailed(t, m, true) }},
}

// TestReport runs every scenario with Claude Code alone and with mcp-heal
// and prints the comparison table of the README:
//
//	go test ./internal/e2e -run TestReport -v -args -report
func TestReport(t *testing.T) {
	if !*reportFlag {
		t.Log("the comparison table is produced with: go test ./internal/e2e -run TestReport -v -args -report")
		return
	}
	got := make([][2]outcome, len(reportRows))
	t.Run("group", func(t *testing.T) {
		for i, row := range reportRows {
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
		fmt.Fprintf(&b, "| %s | %s | %s |\n", row.name, cell(got[i][0]), cell(got[i][1]))
	}
	fmt.Fprint(os.Stdout, "\n"+b.String())
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
