package bridge

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// errPeerClosed is what a write to a pooled connection the server already
// closed returns instead of writing.
var errPeerClosed = errors.New("server closed the connection before the request was written")

// dialChecked dials TCP and wraps the connection so that a write first
// checks whether the server has already closed it.
//
// Why: after a server restarts, the client's pooled keep-alive connections
// to the old process are dead. A POST written to one fails with EOF after
// the write, which looks exactly like a server that crashed while running
// the request (it "may have run"), so the shim could not retry a tools/call.
// Checking before the write turns that case into an error with nothing
// written, which net/http retries by itself on a fresh connection (the
// body is replayable), and which, if the server is really down, ends in a
// refused dial: known not sent.
func dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	return &checkedConn{Conn: c, rc: rc}, nil
}

type checkedConn struct {
	net.Conn
	rc syscall.RawConn
}

func (c *checkedConn) Write(b []byte) (int, error) {
	if peerClosed(c.rc) {
		return 0, errPeerClosed
	}
	return c.Conn.Write(b)
}
