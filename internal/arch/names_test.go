package arch

import (
	"go/ast"
	"go/token"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// printers are the packages that print a server's name: the monitor's
// and the hooks' words, status, doctor and heal, the status line, and the
// commands.
var printers = []string{"internal/health", "internal/status", "internal/doctor", "internal/hook", "internal/monitor", "internal/statusline", "cmd/mcp-heal"}

// rawName reports whether e is a server's name as it came: a field
// Server (a record's, an incident's, a hook input's) or Name (a
// claudecfg.Server's; other Names are caught too, which costs a wrap), or a
// variable named server.
func rawName(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return x.Sel.Name == "Server" || x.Sel.Name == "Name"
	case *ast.Ident:
		return x.Name == "server"
	case *ast.StarExpr:
		return rawName(x.X)
	case *ast.ParenExpr:
		return rawName(x.X)
	}
	return false
}

// notPrinted are the functions that build a string with a name that is
// a key, not text anyone reads: file and function, and why.
var notPrinted = map[string]string{
	"internal/hook/input.go Parse":         "finds Claude Code's own quoting of the name, to replace it by the rule",
	"internal/hook/turn.go firstInTurn":    "a claim's key (state.ClaimTold names the file by its hash)",
	"internal/hook/failure.go conflictKey": "a claim's key (state.ClaimTold names the file by its hash)",
}

// TestNamesPrintedByTheRule: in the printers, a server's name never goes
// raw into a formatted line (fmt's Sprintf, Fprintf, Errorf...) nor into
// a string built with +: it goes through text.Name or text.QuotedName, the
// one rule (a name may hold a newline and "mcp-heal:", and would forge a
// line; TestHostileServerNames runs every printer on such names).
func TestNamesPrintedByTheRule(t *testing.T) {
	testenv.NeedsSource(t)
	checked := 0
	for _, src := range sources(t) {
		printer := false
		for _, p := range printers {
			printer = printer || src.dir == p
		}
		if !printer {
			continue
		}
		ast.Inspect(src.file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, isID := sel.X.(*ast.Ident); !isID || id.Name != "fmt" {
					return true
				}
				checked++
				for _, a := range x.Args {
					if rawName(a) {
						t.Errorf("%s: fmt.%s prints a server's name raw: wrap it in text.Name or text.QuotedName", src.pos(x), sel.Sel.Name)
					}
				}
			case *ast.BinaryExpr:
				if x.Op == token.ADD && (rawName(x.X) || rawName(x.Y)) && (isString(x.X) || isString(x.Y)) && notPrinted[src.path+" "+src.funcOf(x)] == "" {
					t.Errorf("%s: a string is built with a server's name raw: wrap it in text.Name or text.QuotedName", src.pos(x))
				}
			}
			return true
		})
	}
	if checked < 50 {
		t.Fatalf("checked %d fmt calls in %v: the walk missed the printers", checked, printers)
	}
}

// isString reports whether e is a string literal or a + of one.
func isString(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x.Kind == token.STRING
	case *ast.BinaryExpr:
		return x.Op == token.ADD && (isString(x.X) || isString(x.Y))
	}
	return false
}
