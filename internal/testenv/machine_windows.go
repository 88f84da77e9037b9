package testenv

import "testing"

// TimingSensitive does nothing on Windows: the tests that take the machine
// lock run on Linux and macOS (machine_unix.go).
func TimingSensitive(testing.TB) {}

// LoadsMachine does nothing on Windows (see TimingSensitive).
func LoadsMachine(testing.TB) {}
