//go:build !unix

package regfile

// oNonBlock: Windows has no FIFO in the file system to wait on.
const oNonBlock = 0
