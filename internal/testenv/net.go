package testenv

import (
	"net"
	"testing"
)

// FreePort picks a free loopback port for a test server: listen on :0,
// then close. (Another process could take it in between; tests that start
// a server on it retry or fail loudly.)
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
