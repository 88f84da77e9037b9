package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// WidenPipe raises the capacity of pipe f to 1 MiB (Linux's default
// pipe-max-size, allowed to any user), when f is a pipe: a large message
// then crosses it in 16 hand-offs between the processes instead of 256,
// and on a busy machine, where each hand-off can wait for a time slice,
// those were most of what a big answer cost through the shim. A failure
// changes nothing.
func WidenPipe(f *os.File) {
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
	}
}
