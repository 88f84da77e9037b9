//go:build unix

package cfgfile

import (
	"os"
	"syscall"
)

// chownLike gives f the owner of st's file. It works only for root or the
// same owner; best effort, as a rewrite must not change who owns the file.
func chownLike(f *os.File, st os.FileInfo) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(sys.Uid), int(sys.Gid))
	}
}
