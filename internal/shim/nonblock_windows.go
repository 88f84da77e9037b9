package shim

import "errors"

// setNonblock leaves the handle alone: Windows pipes are not polled by
// Go's netpoller when they were opened synchronously (Claude Code's stdio
// pipes are), so Pollable keeps the file as it is and reads block a thread.
func setNonblock(fd uintptr) error { return errors.ErrUnsupported }
