//go:build !linux && !darwin

package procinfo

// Get returns ErrUnsupported: mcp-heal inspects processes on Linux and
// macOS only.
func Get(pid int) (*Info, error) { return nil, ErrUnsupported }

// List returns ErrUnsupported.
func List() ([]Info, error) { return nil, ErrUnsupported }

func identify(pid int) (*Info, error) { return nil, ErrUnsupported }
