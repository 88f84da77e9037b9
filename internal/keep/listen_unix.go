//go:build unix

package keep

import (
	"net"
	"os"
)

// listen creates the socket, 0600, for the kept guardian to serve. The
// shim's copy never unlinks it: the guardian owns the file from now on.
func listen(path string) (*net.UnixListener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, err
	}
	return ln, nil
}
