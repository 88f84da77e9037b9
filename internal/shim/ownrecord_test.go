package shim

import (
	"os"
	"testing"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/state"
	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// waitOwnRecord waits, 5 s at most, until the state record of this
// process (the one an in-process shim with Options.Record writes) is
// there and satisfies ok, and returns it. The test fails, naming what,
// when it never is.
func waitOwnRecord(t *testing.T, what string, ok func(*state.Record) bool) *state.Record {
	t.Helper()
	var r *state.Record
	testenv.WaitFor(t, 5*time.Second, what, func() bool {
		var err error
		r, err = state.Read(os.Getpid())
		return err == nil && ok(r)
	})
	return r
}
