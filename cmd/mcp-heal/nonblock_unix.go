//go:build unix

package main

import "syscall"

func setNonblock(fd uintptr) error { return syscall.SetNonblock(int(fd), true) }
