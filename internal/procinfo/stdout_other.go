//go:build !linux

package procinfo

// stdoutIs is false: macOS tells a process's open files only through
// libproc (proc_pidfdinfo), which needs cgo, so there only the process the
// shim started counts as the server (TreeOf). Windows has no job-control
// stop to ask about.
func stdoutIs(pid int, p Pipe) bool { return false }
