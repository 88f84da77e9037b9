package demo

import (
	"errors"
	"syscall"
)

// The demo runs on Linux and macOS; on Windows it only builds.
var errWindows = errors.New("the demo does not run on Windows yet")

func ownGroup() *syscall.SysProcAttr { return nil }

func kill(pid int) error { return errWindows }

func freeze(pid int) error { return errWindows }
