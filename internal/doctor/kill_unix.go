//go:build unix

package doctor

import "syscall"

// kill is the real signal sender (tests inject their own).
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
