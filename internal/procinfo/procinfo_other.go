//go:build !linux && !darwin && !windows

package procinfo

import "time"

// Get returns ErrUnsupported: mcp-heal inspects processes on Linux, macOS
// and Windows only.
func Get(pid int) (*Info, error) { return nil, ErrUnsupported }

// List returns ErrUnsupported.
func List() ([]Info, error) { return nil, ErrUnsupported }

// OfUser returns ErrUnsupported.
func OfUser(uid int, since time.Time) ([]int, error) { return nil, ErrUnsupported }

// Environ returns ErrUnsupported.
func Environ(pid int) ([]string, error) { return nil, ErrUnsupported }

// Children returns ErrUnsupported.
func Children(pid int) ([]int, error) { return nil, ErrUnsupported }

func identify(pid int) (*Info, error) { return nil, ErrUnsupported }
