//go:build unix

package regfile

import "syscall"

// oNonBlock keeps Open from waiting on a FIFO (see Open).
const oNonBlock = syscall.O_NONBLOCK
