//go:build !windows

package cfgfile

// failHandleRenames: outside Windows the checked rename is rename.
func failHandleRenames(func(string, string) error) func() { return func() {} }
