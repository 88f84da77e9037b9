package arch

import (
	"go/ast"
	"go/token"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// maxShimFields bounds shim.Shim (issue 33: 58 fields, 12 of them one
// server run's, told apart by generation counters).
const maxShimFields = 45

// TestOneValuePerRun: what belongs to one run of the server is a run
// value made at each dial (internal/shim/run.go), not loose fields of
// the Shim told apart by a generation counter. The Shim has at most
// maxShimFields fields, and no file of the shim but run.go compares a
// generation: a stale callback is one whose run is not the current one.
func TestOneValuePerRun(t *testing.T) {
	testenv.NeedsSource(t)
	fields := -1
	for _, src := range sources(t) {
		if src.dir != "internal/shim" {
			continue
		}
		ast.Inspect(src.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok && n.Name.Name == "Shim" {
					fields = 0
					for _, f := range st.Fields.List {
						fields += max(len(f.Names), 1)
					}
					if fields > maxShimFields {
						t.Errorf("%s: shim.Shim has %d fields, more than %d: what belongs to one run of the server goes in run (run.go)", src.pos(n), fields, maxShimFields)
					}
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isGen(n.X) || isGen(n.Y)) && src.path != "internal/shim/run.go" {
					t.Errorf("%s: compares a generation: a stale callback is one whose run is not the current one (r != s.run), and only run.go reads gen", src.pos(n))
				}
			}
			return true
		})
	}
	if fields < 0 {
		t.Fatal("found no shim.Shim: the walk missed the shim (the test would pass for nothing)")
	}
}

// isGen reports whether x is a generation: gen, or x.gen.
func isGen(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name == "gen"
	case *ast.SelectorExpr:
		return x.Sel.Name == "gen"
	}
	return false
}
