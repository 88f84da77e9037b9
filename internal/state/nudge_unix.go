//go:build unix

package state

import "syscall"

// ListenHeal does nothing on unix: a shim is nudged with SIGHUP
// (shim.RunWithSignals), which NudgeShim sends.
func ListenHeal(heal func()) (stop func(), err error) { return func() {}, nil }

// NudgeShim is SignalShim's sender: kill(2).
func NudgeShim(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
