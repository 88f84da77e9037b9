package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// program is one package built for the tests, once per test process.
type program struct {
	once sync.Once
	path string
	err  string
}

var (
	programsMu sync.Mutex
	programs   = map[string]*program{}
)

// Program builds the module's main package pkg (a path from the module
// root: "./internal/e2e/testdata/gosdk-server") once per test process and
// returns the binary's path, named as the package's directory. It fails
// tb when the package does not build.
func Program(tb testing.TB, pkg string) string {
	tb.Helper()
	programsMu.Lock()
	p := programs[pkg]
	if p == nil {
		p = &program{}
		programs[pkg] = p
	}
	programsMu.Unlock()
	p.once.Do(func() { p.path, p.err = build(pkg) })
	if p.err != "" {
		tb.Fatalf("testenv: build %s: %s", pkg, p.err)
	}
	return p.path
}

// build builds pkg into a directory of its own under the temporary one.
func build(pkg string) (path, errText string) {
	root, err := moduleRoot()
	if err != nil {
		return "", err.Error()
	}
	name := filepath.Base(pkg)
	dir, err := os.MkdirTemp("", "mcp-heal-"+name+"-")
	if err != nil {
		return "", err.Error()
	}
	path = filepath.Join(dir, name)
	if runtime.GOOS == "windows" {
		path += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", path, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", err.Error() + "\n" + string(out)
	}
	return path, ""
}
