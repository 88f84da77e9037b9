package main

import (
	"runtime"
	"unsafe"

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

// diesWithMe puts this process in a job object that kills what it holds
// when its last handle closes, which is when this process ends, however
// it ends: the binary it starts (which inherits the job) never outlives a
// launcher that Claude Code ended on a hook's timeout. Windows has no exec;
// the sh launcher's exec gives unix the same. Best effort: without it the
// binary still runs.
func diesWithMe() {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return
	}
	if err := windows.AssignProcessToJobObject(job, windows.CurrentProcess()); err != nil {
		windows.CloseHandle(job)
	}
	// The handle stays open until this process ends.
}
