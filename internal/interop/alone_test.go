//go:build unix

package interop

import (
	"os"
	"testing"
)

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
