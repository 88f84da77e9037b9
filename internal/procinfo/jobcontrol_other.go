//go:build !windows

package procinfo

// jobControl: unix stops processes with SIGSTOP and SIGTSTP (StoppedIn).
const jobControl = true
