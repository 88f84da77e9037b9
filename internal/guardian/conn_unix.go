//go:build unix

package guardian

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
)

// maxLine bounds one control message: they are small, and a peer that
// sends more is broken.
const maxLine = 1 << 20

// ctrl is one end of a control connection: JSON lines, and file
// descriptors passed with SCM_RIGHTS.
type ctrl struct {
	c   *net.UnixConn
	wmu sync.Mutex

	buf []byte
	fds []int // received, not yet claimed
}

func newCtrl(c *net.UnixConn) *ctrl { return &ctrl{c: c} }

// fileConn turns a socket fd into a *net.UnixConn (the fd is dup'ed
// close-on-exec; f is closed).
func fileConn(f *os.File) (*net.UnixConn, error) {
	defer f.Close()
	nc, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		nc.Close()
		return nil, errors.New("control descriptor is not a unix socket")
	}
	return uc, nil
}

// send writes m, with files attached when given.
func (c *ctrl) send(m msg, files ...*os.File) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	m.FDs = len(files)
	b := encode(m)
	return withFDs(files, nil, func(fds []int) error {
		var oob []byte
		if len(fds) > 0 {
			oob = syscall.UnixRights(fds...)
		}
		n, oobn, err := c.c.WriteMsgUnix(b, oob, nil)
		if err != nil {
			return err
		}
		if oobn != len(oob) {
			return errors.New("control socket: descriptors not sent")
		}
		if n < len(b) {
			_, err = c.c.Write(b[n:])
		}
		return err
	})
}

// withFDs calls fn with the descriptors of files, each held open by its
// SyscallConn's Control meanwhile. Not (*os.File).Fd(): that puts the
// pipe back in blocking mode, and the flag is the pipe's, shared with
// the shim that reads it raw (internal/rawio; internal/arch forbids Fd()
// here).
func withFDs(files []*os.File, fds []int, fn func([]int) error) error {
	if len(files) == 0 {
		return fn(fds)
	}
	rc, err := files[0].SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = withFDs(files[1:], append(fds, int(fd)), fn) }); err != nil {
		return err
	}
	return ferr
}

// sendLine writes one message made elsewhere (a JSON object, one line,
// no descriptors).
func (c *ctrl) sendLine(b []byte) error {
	if bytes.IndexByte(b, '\n') >= 0 {
		return errors.New("control socket: a message must be one line")
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.c.Write(append(b[:len(b):len(b)], '\n'))
	return err
}

// recv reads the next message and the descriptors that came with it (its
// FDs). An error when the peer is gone.
func (c *ctrl) recv() (msg, []int, error) {
	for {
		if i := bytes.IndexByte(c.buf, '\n'); i >= 0 {
			line := c.buf[:i]
			var m msg
			err := json.Unmarshal(line, &m)
			if err == nil && m.Op == "note" {
				m.raw = append([]byte(nil), line...)
			}
			c.buf = append(c.buf[:0], c.buf[i+1:]...)
			if err != nil {
				return msg{}, nil, fmt.Errorf("control socket: bad message: %w", err)
			}
			n := min(max(m.FDs, 0), len(c.fds))
			fds := append([]int(nil), c.fds[:n]...)
			c.fds = c.fds[n:]
			return m, fds, nil
		}
		if len(c.buf) > maxLine {
			return msg{}, nil, errors.New("control socket: message too long")
		}
		var tmp [4096]byte
		oob := make([]byte, syscall.CmsgSpace(8*4))
		n, oobn, _, _, err := c.c.ReadMsgUnix(tmp[:], oob)
		if oobn > 0 {
			if cms, perr := syscall.ParseSocketControlMessage(oob[:oobn]); perr == nil {
				for _, cm := range cms {
					if fds, ferr := syscall.ParseUnixRights(&cm); ferr == nil {
						for _, fd := range fds {
							syscall.CloseOnExec(fd)
						}
						c.fds = append(c.fds, fds...)
					}
				}
			}
		}
		if n > 0 {
			c.buf = append(c.buf, tmp[:n]...)
		}
		if err != nil {
			return msg{}, nil, err
		}
		if n == 0 && oobn == 0 {
			return msg{}, nil, errEOF
		}
	}
}

var errEOF = errors.New("control socket closed")

// close closes the connection and any descriptors nobody claimed.
func (c *ctrl) close() {
	c.c.Close()
	for _, fd := range c.fds {
		syscall.Close(fd)
	}
	c.fds = nil
}
