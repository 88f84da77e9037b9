package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// source is one non-test Go file of the module, parsed (every build
// constraint: the Windows and macOS files too).
type source struct {
	dir, path string // its package's directory and its path, slash-separated, from the module root
	fset      *token.FileSet
	file      *ast.File
}

// pos is file:line of n.
func (s source) pos(n ast.Node) string {
	return s.path + ":" + strconv.Itoa(s.fset.Position(n.Pos()).Line)
}

// funcOf names the function declaration around n ("" at top level).
func (s source) funcOf(n ast.Node) string {
	for _, d := range s.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Pos() <= n.Pos() && n.End() <= fd.End() {
			return fd.Name.Name
		}
	}
	return ""
}

// sources parses the module's non-test Go files (testdata and hidden
// directories aside). It fails when it finds few: a walk that missed the
// module would let every rule pass for nothing.
func sources(t *testing.T) []source {
	t.Helper()
	root := testenv.ModuleRoot(t)
	fset := token.NewFileSet()
	var out []source
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, source{dir: filepath.ToSlash(filepath.Dir(rel)), path: filepath.ToSlash(rel), fset: fset, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found %d Go files under %s: the walk missed the module", len(out), root)
	}
	return out
}
