package arch

import (
	"go/ast"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// fieldReads lists where a non-test file of the module reads a field
// named field (x.field, x not an imported package's name), outside the
// packages in except (slash-separated directories from the module root).
// Writes are not reads: the left side of an assignment.
func fieldReads(t *testing.T, field string, except ...string) []string {
	t.Helper()
	var out []string
	for _, src := range sources(t) {
		if slices.Contains(except, src.dir) {
			continue
		}
		pkgs := map[string]bool{}
		for _, im := range src.file.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			n := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				n = im.Name.Name
			}
			pkgs[n] = true
		}
		written := map[ast.Expr]bool{}
		ast.Inspect(src.file, func(n ast.Node) bool {
			if a, ok := n.(*ast.AssignStmt); ok {
				for _, l := range a.Lhs {
					written[l] = true
				}
			}
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != field || written[sel] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && pkgs[x.Name] {
				return true // a package's name: state.NotAnswering, the type
			}
			out = append(out, src.pos(sel))
			return true
		})
	}
	return out
}

// TestQuietReadOnce: "not answering" is read from a shim's record in one
// place, state.Record.Quiet, which counts it only while the shim runs the
// server. Six readers derived it from the raw field, three of them without
// the State == Running check. The shim writes the field; only state reads
// it.
func TestQuietReadOnce(t *testing.T) {
	testenv.NeedsSource(t)
	for _, at := range fieldReads(t, "NotAnswering", "internal/state") {
		t.Errorf("%s: reads Record.NotAnswering itself: call Record.Quiet(), the one reading (it checks State == Running)", at)
	}
	// The walk sees reads at all: a field every reader uses.
	if len(fieldReads(t, "ShimPID", "internal/state")) == 0 {
		t.Fatal("found no read of ShimPID outside state: the walk missed the module (the test would pass for nothing)")
	}
}
