//go:build linux || darwin

package guardian

import "net"

// peerUID is the uid of the process at the other end of c (sockUID says
// how each OS reads it).
func peerUID(c *net.UnixConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid, cerr := -1, error(nil)
	err = rc.Control(func(fd uintptr) { uid, cerr = sockUID(int(fd)) })
	if err != nil {
		return -1, err
	}
	return uid, cerr
}
