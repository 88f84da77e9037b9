//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr puts the child in its own process group (the stop ladder
// signals the group).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
