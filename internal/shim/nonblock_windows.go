package shim

import "errors"

// setNonblock leaves the handle alone: the shim does not run on Windows
// yet (it only builds there).
func setNonblock(fd uintptr) error { return errors.ErrUnsupported }
