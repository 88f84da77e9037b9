//go:build !windows

package cfgfile

import (
	"bytes"
	"os"
	"time"

	"github.com/mcp-heal/mcp-heal/internal/regfile"
)

// checkedRename is the compare-and-swap where no atomic exchange exists
// (a unix file system without one; Windows: rename_windows.go): compare
// again, then rename at once. A write that a program ignoring the lock
// lands between the two is lost. (busy is always false here: the loop is
// Windows' shape, kept so both read alike.)
func checkedRename(name, target string, old []byte) error {
	var err error
	for deadline := time.Now().Add(busyWait); ; time.Sleep(10 * time.Millisecond) {
		var cur []byte
		cur, err = regfile.ReadConfig(target)
		if err == nil && !bytes.Equal(cur, old) {
			err = ErrChanged
		}
		if err == nil {
			err = rename(name, target)
		}
		if !busy(err) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
