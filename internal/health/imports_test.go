package health_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestShimLinksNoConfigDiscovery: health (which the shim links) does not
// import the config package: Claude Code's policy is read through
// internal/ccpolicy, which is light; config discovery (claudecfg) and the
// CLI helpers stay out of the shim.
func TestShimLinksNoConfigDiscovery(t *testing.T) {
	testenv.NeedsSource(t)
	out, err := exec.Command("go", "list", "-deps", "github.com/mcp-heal/mcp-heal/internal/shim", "github.com/mcp-heal/mcp-heal/internal/health").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/mcp-heal/mcp-heal/internal/claudecfg" {
			t.Fatalf("internal/shim or internal/health links %s", dep)
		}
	}
}
