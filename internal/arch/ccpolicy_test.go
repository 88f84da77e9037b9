package arch

import (
	"go/ast"
	"go/token"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// TestPolicyOwnsEveryRule: ccpolicy is the one owner of Claude Code's MCP
// policy (issue 33 item 3).
//   - It reads files only through its Reader (reader.go): Load and the
//     project's git root called os.Stat and os.ReadDir themselves.
//   - There is one Options type, made from the environment in one place
//     (ccpolicy.FromEnv): claudecfg had its own, and the hook, the shim,
//     claudecfg and its Policy method each built one.
//   - The "not approved" sentence is written once (ccpolicy and health each
//     had one, worded differently).
//   - Shadowing is decided by ccpolicy.Shadowed: claudecfg.Discover
//     decided it itself; any other package only copies its answer.
func TestPolicyOwnsEveryRule(t *testing.T) {
	testenv.NeedsSource(t)
	reads := map[string]bool{"os.Stat": true, "os.Lstat": true, "os.ReadDir": true, "os.ReadFile": true, "os.Open": true, "os.OpenFile": true, "regfile.ReadConfig": true}
	sentences := 0
	optionTypes := 0
	for _, s := range sources(t) {
		inPolicy := s.dir == "internal/ccpolicy"
		var fn *ast.FuncDecl
		ast.Inspect(s.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				fn = n
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && inPolicy && reads[x.Name+"."+sel.Sel.Name] && s.path != "internal/ccpolicy/reader.go" {
						t.Errorf("%s: ccpolicy reads a file with %s.%s: read through its Reader (Options.Files)", s.pos(n), x.Name, sel.Sel.Name)
					}
				}
			case *ast.TypeSpec:
				if _, ok := n.Type.(*ast.StructType); ok && n.Name.Name == "Options" && (inPolicy || s.dir == "internal/claudecfg") {
					optionTypes++
					if !inPolicy {
						t.Errorf("%s: a second Options type for Claude Code's files: use ccpolicy.Options", s.pos(n))
					}
				}
			case *ast.CompositeLit:
				if optionsLit(n.Type, s.dir) && !(inPolicy && fn != nil && fn.Name.Name == "FromEnv") {
					t.Errorf("%s: builds Claude Code's Options itself: ccpolicy.FromEnv is the one place", s.pos(n))
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && strings.Contains(n.Value, "never got the user's approval") {
					sentences++
					if !inPolicy {
						t.Errorf("%s: writes the \"not approved\" sentence again: use ccpolicy.NotApproved or ApprovalWhy", s.pos(n))
					}
				}
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Shadowed" && !inPolicy && !fromShadowed(s.file, n) {
						t.Errorf("%s: decides shadowing itself: copy ccpolicy.Shadowed's answer", s.pos(n))
					}
				}
			}
			return true
		})
	}
	if sentences == 0 || optionTypes == 0 {
		t.Fatalf("found %d \"not approved\" sentences and %d Options types: the walk missed ccpolicy", sentences, optionTypes)
	}
}

// optionsLit says whether a composite literal's type is Claude Code's
// Options: ccpolicy.Options or claudecfg.Options, or Options inside those
// packages.
func optionsLit(typ ast.Expr, dir string) bool {
	switch t := typ.(type) {
	case *ast.SelectorExpr:
		x, ok := t.X.(*ast.Ident)
		return ok && t.Sel.Name == "Options" && (x.Name == "ccpolicy" || x.Name == "claudecfg")
	case *ast.Ident:
		return t.Name == "Options" && (dir == "internal/ccpolicy" || dir == "internal/claudecfg")
	}
	return false
}

// fromShadowed says whether assignment a sits in a range over
// ccpolicy.Shadowed's answer (for i, sh := range ccpolicy.Shadowed(...)),
// assigning the ranged value.
func fromShadowed(f *ast.File, a *ast.AssignStmt) bool {
	ok := false
	ast.Inspect(f, func(n ast.Node) bool {
		r, isRange := n.(*ast.RangeStmt)
		if !isRange || r.Body.Pos() > a.Pos() || r.Body.End() < a.End() {
			return true
		}
		c, isCall := r.X.(*ast.CallExpr)
		if !isCall {
			return true
		}
		if sel, isSel := c.Fun.(*ast.SelectorExpr); isSel && sel.Sel.Name == "Shadowed" {
			if x, isID := sel.X.(*ast.Ident); isID && x.Name == "ccpolicy" {
				v, _ := r.Value.(*ast.Ident)
				rhs, _ := a.Rhs[0].(*ast.Ident)
				ok = v != nil && rhs != nil && v.Name == rhs.Name
			}
		}
		return true
	})
	return ok
}
