//go:build unix

package regfile

import (
	"io/fs"
	"os"
	"syscall"
)

// openFile is os.OpenFile, O_NONBLOCK so that it never waits on a FIFO
// (see Open).
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NONBLOCK, perm)
}
