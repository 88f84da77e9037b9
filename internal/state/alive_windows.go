package state

import "os"

// Alive reports whether a process with pid exists. Windows only builds
// (the shim does not run there yet): FindProcess opens the process, which
// fails for a pid that names none.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
