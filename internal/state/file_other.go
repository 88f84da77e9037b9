//go:build !unix && !windows

package state

import (
	"os"

	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// openState: no O_NOFOLLOW here; mcp-heal is built for unix and Windows.
func openState(path string, flag int) (*os.File, error) { return regfile.Open(path, flag, 0o600) }

// lockPath does not lock where neither flock(2) nor LockFileEx exists.
func lockPath(string) (func(), error) { return func() {}, nil }
