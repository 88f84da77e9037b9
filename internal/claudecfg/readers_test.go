package claudecfg_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

const module = "github.com/mcp-heal/mcp-heal/internal/"

// TestReadersOnlyRead: the hooks, status, doctor and probe read servers and
// never rewrite a config file, so they link only the read side: claudecfg
// imports nothing that writes JSON or files (sjson, claudecfg/wrap,
// cfgfile), and none of those readers depends on wrap or cfgfile. (Before
// the split, claudecfg held wrap and the atomic commit, and every hook
// linked them.)
func TestReadersOnlyRead(t *testing.T) {
	testenv.NeedsSource(t)
	imports := goList(t, "-f", `{{join .Imports "\n"}}`, module+"claudecfg")
	for _, w := range []string{"github.com/tidwall/sjson", module + "cfgfile", module + "claudecfg/wrap"} {
		if slices.Contains(imports, w) {
			t.Errorf("claudecfg imports %s: the read side must not write", w)
		}
	}
	for _, reader := range []string{"hook", "doctor", "probe", "health"} {
		deps := goList(t, "-deps", module+reader)
		for _, w := range []string{module + "cfgfile", module + "claudecfg/wrap"} {
			if slices.Contains(deps, w) {
				t.Errorf("internal/%s depends on %s; it only reads servers (claudecfg)", reader, w)
			}
		}
	}
}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v (the test needs the go command)", args, err)
	}
	return strings.Fields(string(out))
}
