//go:build unix

package keep

import (
	"os"
	"syscall"
)

// owner is the uid owning fi.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
