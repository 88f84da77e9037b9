package procinfo

import (
	"os"
	"strconv"
)

// stdoutIs reports whether pid's stdout (fd 1) is an end of pipe p:
// /proc/PID/fd/1 reads "pipe:[INODE]". Another user's process tells
// nothing: false.
func stdoutIs(pid int, p Pipe) bool {
	l, err := os.Readlink(procDir(pid) + "/fd/1")
	return err == nil && l == "pipe:["+strconv.FormatUint(uint64(p), 10)+"]"
}
