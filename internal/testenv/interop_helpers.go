package testenv

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// LastLines returns the last n lines of s: the end of a child's log, which
// a failed test prints.
func LastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WaitListening waits until addr accepts TCP connections: a server a test
// started is ready. It gives up after within, or as soon as exited is
// closed (the server's process ended; nil for none), and says which.
func WaitListening(addr string, within time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(within)
	for {
		select {
		case <-exited:
			return fmt.Errorf("exited before it listened on %s", addr)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s within %v: %w", addr, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
