package keep

import (
	"errors"
	"net"
)

func listen(string) (*net.UnixListener, error) {
	return nil, errors.New("kept servers are not supported on Windows")
}
