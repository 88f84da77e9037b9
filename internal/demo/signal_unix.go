//go:build unix

package demo

import "syscall"

// ownGroup starts the target in its own process group, so stopping it
// stops everything it started.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// kill sends SIGKILL to pid (a negative pid: its process group).
func kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// freeze stops pid with SIGSTOP: a hung server.
func freeze(pid int) error { return syscall.Kill(pid, syscall.SIGSTOP) }
