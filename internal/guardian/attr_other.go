//go:build unix && !linux

package guardian

import "syscall"

// serverAttr: the server leads a process group of its own (the ladder
// signals the group). Without Pdeathsig, the shim kills the group when the
// guardian dies.
func serverAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
