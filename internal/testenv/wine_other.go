//go:build !windows

package testenv

// UnderWine reports whether this process is a Windows one running under
// Wine: never, off Windows.
func UnderWine() bool { return false }
