package arch

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestFuzzTable: CONTRIBUTING.md's fuzz table names every fuzz test, under
// its package (issue 33, item 7: FuzzFollower, FuzzQuote and FuzzSafe were
// missing).
func TestFuzzTable(t *testing.T) {
	testenv.NeedsSource(t)
	root := testenv.ModuleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // package directory: its row
	for line := range strings.Lines(string(doc)) {
		if m := regexp.MustCompile("^\\| `(internal/[^`]+)` \\|(.*)\\|\\s*$").FindStringSubmatch(line); m != nil {
			rows[m[1]] = m[2]
		}
	}
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range fuzz.FindAllStringSubmatch(string(b), -1) {
			n++
			if !strings.Contains(rows[filepath.ToSlash(rel)], "`"+m[1]+"`") {
				t.Errorf("%s (%s) is not in CONTRIBUTING.md's fuzz table", m[1], filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("found no fuzz test: the walk missed the module")
	}
}
