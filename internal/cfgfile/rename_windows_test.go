package cfgfile

import "golang.org/x/sys/windows"

// failHandleRenames makes the checked rename fail as fail does, and
// returns the undo.
func failHandleRenames(fail func(string, string) error) func() {
	renameByHandle = func(_ windows.Handle, to string, _ uint32) error { return fail("", to) }
	return func() { renameByHandle = renameHandle }
}
