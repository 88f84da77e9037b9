package health

import (
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/state"
)

// TestCutError: the account of a cut answer says how many bytes came,
// how the server ended, that the call may have taken effect, and whether
// it is restarting; the hooks classify it as the restart or crash loop
// it reports.
func TestCutError(t *testing.T) {
	c := Cause{Kind: state.CauseSignal, SignalNum: 9, Signal: "killed"}
	for _, tc := range []struct {
		restarted bool
		want      []string
		class     Class
	}{
		{true, []string{`MCP server "big" is restarting: after 4000000 bytes of this call's answer, the server process was killed by signal 9 (SIGKILL)`, "may or may not have taken effect", "starts fresh"}, ShimRestarted},
		{false, []string{`MCP server "big" is failing (crash loop): after 4000000 bytes`, "may or may not have taken effect", "longer intervals"}, ShimFailed},
	} {
		msg := CutError("big", c, 4_000_000, tc.restarted)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("CutError(restarted %v) does not say %q: %s", tc.restarted, w, msg)
			}
		}
		if got, ok := Classify("MCP error -32603: " + msg); !ok || got.Class != tc.class || got.Server != "big" {
			t.Errorf("Classify(CutError(restarted %v)) = %+v, want %s", tc.restarted, got, tc.class)
		}
	}
}
