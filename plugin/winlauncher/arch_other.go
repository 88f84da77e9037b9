//go:build !windows

package main

import "runtime"

// nativeArch is this machine's architecture (the launcher runs natively
// where it is not Windows: tests).
func nativeArch() string { return runtime.GOARCH }

// diesWithMe: nothing to do where this launcher is not what hooks run
// (the sh launcher execs the binary there).
func diesWithMe() {}
