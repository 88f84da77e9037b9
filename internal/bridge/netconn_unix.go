//go:build linux || darwin

package bridge

import "syscall"

// peerClosed peeks at the socket without blocking or consuming: a
// zero-byte read means the peer sent FIN, ECONNRESET that it reset the
// connection. RawConn.Control does not take the read lock, so it does not
// wait for net/http's reader, which is parked on the same socket.
func peerClosed(rc syscall.RawConn) bool {
	closed := false
	rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = (n == 0 && err == nil) || err == syscall.ECONNRESET
	})
	return closed
}
