package main

import (
	"runtime"

	"golang.org/x/sys/windows"
)

// nativeArch is the machine's architecture, which an amd64 launcher
// running under emulation on arm64 Windows does not share
// (runtime.GOARCH would say amd64).
func nativeArch() string {
	var proc, native uint16
	if err := windows.IsWow64Process2(windows.CurrentProcess(), &proc, &native); err == nil {
		switch native {
		case 0xAA64: // IMAGE_FILE_MACHINE_ARM64
			return "arm64"
		case 0x8664: // IMAGE_FILE_MACHINE_AMD64
			return "amd64"
		}
	}
	return runtime.GOARCH
}
