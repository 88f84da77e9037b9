package arch

import (
	"go/ast"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// call is one call of pkg.fn (a selector on an imported package's name) in
// a non-test file of the module.
type call struct {
	dir, pos string // the package's directory (slash-separated, from the module root); file:line
	expr     *ast.CallExpr
}

// calls parses the module's non-test Go files and returns the calls of
// pkg.fn for each "pkg.fn" asked for.
func calls(t *testing.T, want ...string) map[string][]call {
	t.Helper()
	out := map[string][]call{}
	for _, src := range sources(t) {
		ast.Inspect(src.file, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			name := x.Name + "." + sel.Sel.Name
			for _, w := range want {
				if name == w {
					out[w] = append(out[w], call{dir: src.dir, pos: src.pos(c), expr: c})
				}
			}
			return true
		})
	}
	return out
}

// TestOneRuleEach: each of these is written once.
//   - "is this process alive" is procinfo.Alive, which counts a zombie as
//     ended; a kill(pid, 0) probe (state had one) counts it as alive.
//   - the hooks and doctor send signals through state.NudgeShim (kill(2),
//     or on Windows the shim's heal event): each had its own `kill`.
//   - "find this server's shim" is state.Find: only state reads the shim
//     records' directory (the hook had its own findShims over it).
func TestOneRuleEach(t *testing.T) {
	testenv.NeedsSource(t)
	found := calls(t, "syscall.Kill", "unix.Kill", "state.ShimsDir")
	for _, c := range append(found["syscall.Kill"], found["unix.Kill"]...) {
		if len(c.expr.Args) == 2 {
			if lit, ok := c.expr.Args[1].(*ast.BasicLit); ok && lit.Value == "0" {
				t.Errorf("%s: kill(pid, 0) asks whether a process is alive, and a zombie passes it: use procinfo.Alive", c.pos)
			}
		}
		if c.dir == "internal/hook" || c.dir == "internal/doctor" {
			t.Errorf("%s: %s sends its own signal: send through state.NudgeShim, the one sender", c.pos, c.dir)
		}
	}
	for _, c := range found["state.ShimsDir"] {
		t.Errorf("%s: reads the shim records itself: state.Find is the one rule for finding a server's shim", c.pos)
	}
	if len(found["syscall.Kill"]) == 0 {
		t.Fatal("found no syscall.Kill at all: the walk missed the module (the test would pass for nothing)")
	}
}
