//go:build unix

package fakeshim

import (
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// Start starts a real process standing in for a shim, killed when tb ends;
// it returns its pid and the counter of the SIGHUPs it gets.
func Start(tb testing.TB) (int, *testenv.SignalCounter) {
	tb.Helper()
	sc := testenv.StartSignalCounter(tb)
	return sc.PID, sc
}

// WriteRecord writes r as the shim r.ShimPID would: with that process's
// identity, which heal checks before it signals it.
func WriteRecord(tb testing.TB, r state.Record) {
	tb.Helper()
	if p, err := procinfo.Get(r.ShimPID); err == nil {
		r.ShimStart, r.ShimExe = p.StartKey, p.Exe
	}
	if err := state.Write(&r); err != nil {
		tb.Fatal(err)
	}
}
