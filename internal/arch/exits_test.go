package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// exitCalls end the process: os.Exit and what calls it.
var exitCalls = []string{"os.Exit", "syscall.Exit", "unix.Exit", "windows.Exit", "log.Fatal", "log.Fatalf", "log.Fatalln"}

// commands are the module's programs (package main): the only places that
// may end the process. internal/release builds the release and
// plugin/winlauncher is the Windows launcher, each a command of its own.
var commands = []string{"cmd/mcp-heal", "internal/release", "plugin/winlauncher"}

// TestMainIsTheOnlyExit: internal packages return errors and exit codes;
// only a command (package main, in commands) ends the process (issue 33,
// item 1). Before, internal/hook's initialiser ran `hook EVENT` and
// called os.Exit (entry.go:29), and internal/hook/healthy's did for
// PreToolUse's healthy path (healthy.go:39): a -cover build of the hook
// recorded nothing, and the rule in CONTRIBUTING.md was false.
func TestMainIsTheOnlyExit(t *testing.T) {
	testenv.NeedsSource(t)
	found := calls(t, exitCalls...)
	mains := map[string]bool{}
	for _, src := range sources(t) {
		if src.file.Name.Name == "main" {
			mains[src.dir] = true
		}
	}
	for _, c := range commands {
		if !mains[c] {
			t.Errorf("%s is not a command (package main): it may not exit", c)
		}
	}
	n := 0
	for _, name := range exitCalls {
		for _, c := range found[name] {
			n++
			if !slices.Contains(commands, c.dir) {
				t.Errorf("%s: %s outside a command: return an error or an exit code to main", c.pos, name)
			}
		}
	}
	if n == 0 {
		t.Fatal("found no os.Exit at all: the walk missed main (the test would pass for nothing)")
	}
}

// setupBuiltins are the only calls an init function may make.
var setupBuiltins = []string{"make", "new", "len", "cap", "append"}

// ioPackages are packages whose calls do I/O, ask the environment or end
// the process: a package variable's initialiser calls none of them.
var ioPackages = []string{"os", "syscall", "unix", "windows", "exec", "net", "http", "io", "ioutil", "log", "slog", "runtime", "debug", "signal", "xdg", "paths", "state"}

// TestNoInitWork: Go runs every linked package's initialisers before main,
// in every command of the binary, so they do no work (issue 33, item 1).
// Precisely:
//   - an init function only assigns (=) to names, and calls nothing but
//     the builtins in setupBuiltins (a call can read a file, ask the
//     environment or exit; a conversion, which the parser cannot tell from
//     a call, goes in a variable's initialiser instead);
//   - a package variable's initialiser calls no function of ioPackages,
//     itself or in a function literal it calls at once (a literal handed
//     to sync.OnceValue runs later, on first use, and is not checked).
//
// Before, internal/hook's init ran the whole `hook EVENT` and exited
// (entry.go:27), and internal/hook/healthy's read /proc/self/environ and
// the attention directory and exited (healthy.go:30).
func TestNoInitWork(t *testing.T) {
	testenv.NeedsSource(t)
	vars := 0
	for _, src := range sources(t) {
		for _, d := range src.file.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				vars++
			}
		}
		for _, msg := range initWork(src) {
			t.Error(msg)
		}
	}
	if vars == 0 {
		t.Fatal("found no package variable: the walk missed the module")
	}
}

// TestInitWorkRule pins what TestNoInitWork allows and refuses.
func TestInitWorkRule(t *testing.T) {
	for _, tc := range []struct {
		code string
		work bool
	}{
		{"var a []int\nfunc init() { a = make([]int, 0, 4) }", false},
		{"var a, b int\nfunc init() { a, b = 1, len(\"xy\") }", false},
		{"var f func()\nfunc init() { f = g }\nfunc g() {}", false},
		{"var e = errors.New(\"x\")", false},
		{"var r = regexp.MustCompile(\"x\")", false},
		{"var v = sync.OnceValue(func() string { return os.Getenv(\"X\") })", false}, // runs on first use
		{"func init() { if len(os.Args) > 1 { os.Exit(0) } }", true},                 // internal/hook's, before
		{"var a string\nfunc init() { a = os.Getenv(\"X\") }", true},
		{"func init() { go g() }\nfunc g() {}", true},
		{"var a int\nfunc init() { a = g() }\nfunc g() int { return 1 }", true},
		{"var a int\nfunc init() { b := 1; a = b }", true},
		{"var h = os.Getenv(\"HOME\")", true},
		{"var h = func() string { return os.Getenv(\"HOME\") }()", true},
		{"var p = paths.Current()", true},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+tc.code, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%q: %v", tc.code, err)
		}
		if got := initWork(source{path: "x.go", fset: fset, file: f}); (len(got) > 0) != tc.work {
			t.Errorf("%q: work %v, want %v (%q)", tc.code, len(got) > 0, tc.work, got)
		}
	}
}

// initWork lists what src's init functions and package variables'
// initialisers do beyond setting variables up (TestNoInitWork's rule).
func initWork(src source) (out []string) {
	for _, d := range src.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name != "init" || d.Recv != nil || d.Body == nil {
				continue
			}
			for _, st := range d.Body.List {
				as, ok := st.(*ast.AssignStmt)
				if !ok || as.Tok != token.ASSIGN {
					out = append(out, fmt.Sprintf("%s: init does more than set variables (a %T): do it from main, or in a variable's initialiser", src.pos(st), st))
					continue
				}
				ast.Inspect(as, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok {
						if id, ok := c.Fun.(*ast.Ident); !ok || !slices.Contains(setupBuiltins, id.Name) {
							out = append(out, fmt.Sprintf("%s: init calls %s: an init only sets variables", src.pos(c), callee(c)))
						}
					}
					return true
				})
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					ast.Inspect(v, func(n ast.Node) bool {
						switch n := n.(type) {
						case *ast.FuncLit:
							return false // runs when called, not here (a call of it at once is checked below)
						case *ast.CallExpr:
							if lit, ok := n.Fun.(*ast.FuncLit); ok {
								ast.Inspect(lit.Body, func(m ast.Node) bool {
									if c, ok := m.(*ast.CallExpr); ok && ioCall(c) {
										out = append(out, fmt.Sprintf("%s: a variable's initialiser calls %s: initialisers do no I/O", src.pos(c), callee(c)))
									}
									return true
								})
							} else if ioCall(n) {
								out = append(out, fmt.Sprintf("%s: a variable's initialiser calls %s: initialisers do no I/O", src.pos(n), callee(n)))
							}
						}
						return true
					})
				}
			}
		}
	}
	return out
}

// ioCall reports whether c calls a function of one of ioPackages.
func ioCall(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && slices.Contains(ioPackages, x.Name)
}

// callee names what c calls, as written.
func callee(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
		return "a method " + f.Sel.Name
	}
	return "a function value"
}
