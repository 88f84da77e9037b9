package proc

import "syscall"

// sysProcAttr puts the child in its own process group (the stop ladder
// signals the group) and, on Linux, asks the kernel to SIGKILL it if the
// shim dies without stopping it (shim killed with -9): its own group means
// no signal aimed at the shim's group reaches it otherwise. Go does not end
// the threads that fork children, so the parent-death signal fires only
// when the shim is gone.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
