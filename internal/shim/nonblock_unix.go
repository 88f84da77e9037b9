//go:build unix

package shim

import "syscall"

func setNonblock(fd uintptr) error { return syscall.SetNonblock(int(fd), true) }
