package guardian

import "syscall"

// serverAttr: the server leads a process group of its own (the ladder
// signals the group), and the kernel SIGKILLs it if the guardian dies (the
// shim then kills the rest of the group and sweeps the tree).
func serverAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
