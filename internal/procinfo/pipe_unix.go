//go:build unix

package procinfo

import (
	"io/fs"
	"syscall"
)

// pipeID is a pipe's inode.
func pipeID(fi fs.FileInfo) Pipe {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return Pipe(st.Ino)
	}
	return 0
}
