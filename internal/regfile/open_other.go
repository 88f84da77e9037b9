//go:build !unix && !windows

package regfile

import (
	"io/fs"
	"os"
)

// openFile is os.OpenFile: no FIFO to wait on here.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
