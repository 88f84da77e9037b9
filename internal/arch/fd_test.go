package arch

import (
	"go/ast"
	"testing"

	"github.com/mcp-heal/mcp-heal/internal/testenv"
)

// fdAllowed are the calls of (*os.File).Fd() the product may make, each
// on a file rawio never reads raw, by file and function.
var fdAllowed = map[[2]string]string{
	{"internal/state/file_unix.go", "lockPath"}:         "flock(2) of a lock file, a regular file",
	{"internal/state/file_windows.go", "lockPath"}:      "LockFileEx of a lock file, a regular file",
	{"internal/testenv/lock_unix.go", "lock"}:           "the test kit's install lock, a regular file",
	{"internal/testenv/machine_unix.go", "machineLock"}: "the test kit's machine lock, a regular file",
	// The shim's own stdin and stdout, made non-blocking right after
	// (the Fd() is what lets it re-open them as a pollable file, before
	// rawio wraps that one).
	{"internal/shim/process.go", "Pollable"}: "the shim's stdio, made non-blocking right after, before rawio wraps it",
}

// TestNoFdOnRawPipes: (*os.File).Fd() puts a pipe in blocking mode, for
// every holder of it (O_NONBLOCK is the pipe's open description's, shared
// through dup, fork and a unix socket). internal/rawio reads and writes
// the server's pipes with raw system calls, which must never meet a
// blocking pipe (issue 30, item 7): it checks the flag on every try, and
// no code may clear it by accident. So Fd() is called only where
// fdAllowed says, on files rawio never reads raw; a descriptor for a
// system call comes from SyscallConn().Control. Before, the guardian's
// ctrl.send called Fd() on the server's pipes to pass them to the shim.
func TestNoFdOnRawPipes(t *testing.T) {
	testenv.NeedsSource(t)
	seen := map[[2]string]bool{}
	for _, src := range sources(t) {
		ast.Inspect(src.file, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) != 0 {
				return true
			}
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Fd" {
				k := [2]string{src.path, src.funcOf(c)}
				if _, ok := fdAllowed[k]; !ok {
					t.Errorf("%s: Fd() in %s: it makes a pipe blocking for every holder, and rawio reads the server's pipes raw; take the descriptor with SyscallConn().Control (or, for a regular file, add it to fdAllowed with the reason)", src.pos(c), k[1])
				}
				seen[k] = true
			}
			return true
		})
	}
	for k, why := range fdAllowed {
		if !seen[k] {
			t.Errorf("fdAllowed lists %s %s (%s), which calls no Fd(): drop it", k[0], k[1], why)
		}
	}
}
