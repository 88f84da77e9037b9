package doctor

import (
	"errors"
	"syscall"
)

// kill does nothing on Windows, where the shim does not run yet (it only
// builds there).
func kill(pid int, sig syscall.Signal) error { return errors.ErrUnsupported }
