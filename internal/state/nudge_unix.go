//go:build unix

package state

import "syscall"

// ListenHeal does nothing on unix: a shim is nudged with SIGHUP
// (shim.RunWithSignals), which NudgeShim sends.
func ListenHeal(heal func()) (stop func(), err error) { return func() {}, nil }

// NudgeShim is SignalShim's sender, and the hooks' and doctor's (one
// sender, tests inject their own): kill(2). Callers verify the process
// first (SignalShim, procinfo.Verify).
func NudgeShim(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
