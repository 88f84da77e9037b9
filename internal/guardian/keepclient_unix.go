//go:build unix

package guardian

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// StartKept starts a kept guardian (argv: the mcp-heal binary, "guardian"
// and its --keep flags) serving ln, in a session of its own so that it
// outlives the shim.
func StartKept(argv []string, ln *net.UnixListener, stderr *os.File) error {
	f, err := ln.File() // a dup: ln stays ours to close
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{f} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kept guardian: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// ListenerFromFD turns the inherited fd into the kept guardian's listener.
func ListenerFromFD(fd uintptr) (*net.UnixListener, error) {
	f := os.NewFile(fd, "keep-socket")
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, err
	}
	ul, ok := l.(*net.UnixListener)
	if !ok {
		l.Close()
		return nil, errors.New("inherited descriptor is not a unix socket listener")
	}
	// The shim that created it removes a stale file; the guardian removes
	// it when it exits.
	ul.SetUnlinkOnClose(true)
	return ul, nil
}

// dialKept connects to a kept guardian's socket and checks that it runs
// as our user.
func dialKept(path string) (*ctrl, error) {
	uc, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if uid, err := peerUID(uc); err != nil || uid != os.Getuid() {
		uc.Close()
		return nil, fmt.Errorf("the kept server's socket %s is held by uid %d, not us (%v)", path, uid, err)
	}
	return newCtrl(uc), nil
}

// Attach connects to the kept guardian at path and attaches as its shim.
// ErrBusy when another shim is attached.
func Attach(path, identity string) (*Attached, error) {
	c, err := dialKept(path)
	if err != nil {
		return nil, err
	}
	if err := c.send(msg{Op: "attach", Identity: identity}); err != nil {
		c.close()
		return nil, err
	}
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, fds, err := c.recv()
	_ = c.c.SetReadDeadline(time.Time{})
	if err != nil {
		closeFDs(fds)
		c.close()
		return nil, fmt.Errorf("attach: %w", err)
	}
	switch m.Ev {
	case "busy":
		c.close()
		return nil, ErrBusy
	case "attached":
	default:
		closeFDs(fds)
		c.close()
		return nil, fmt.Errorf("attach: %s %s", m.Ev, m.Err)
	}
	g := &Guardian{c: c, kept: true, pending: map[int]chan startReply{}, runs: map[int]*Child{}, dead: make(chan struct{}), nextID: m.ID}
	a := &Attached{Guardian: g, Epoch: m.Epoch, Prefix: m.Prefix, Session: m.Session}
	if m.PID > 0 && len(fds) == 3 {
		ch := &Child{PID: m.PID, Started: time.Unix(0, m.Started), g: g, id: m.ID, done: make(chan struct{})}
		if m.Spec != nil {
			ch.cookie = m.Spec.Cookie
		}
		ch.Stdin, ch.Stdout, ch.Stderr = pollable(fds[0], "stdin"), pollable(fds[1], "stdout"), pollable(fds[2], "stderr")
		g.runs[m.ID] = ch
		a.Child = ch
	} else {
		closeFDs(fds)
	}
	go g.read()
	return a, nil
}

// Note sends the keeper's note about the session to a kept guardian
// (KeepHooks.Note): a JSON object with "op":"note", on one line.
func (g *Guardian) Note(note []byte) error {
	return g.c.sendLine(note)
}

// StopKept asks the kept guardian at path to stop its server and exit.
func StopKept(path string) error {
	c, err := dialKept(path)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.send(msg{Op: "stop"}); err != nil {
		return err
	}
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, fds, err := c.recv()
	closeFDs(fds)
	if err != nil {
		return err
	}
	if m.Ev != "stopped" {
		return fmt.Errorf("stop: %s %s", m.Ev, m.Err)
	}
	return nil
}
