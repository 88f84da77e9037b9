package cfgfile

import (
	"errors"

	"golang.org/x/sys/windows"
)

// busy reports whether a rename failed because another program holds the
// target open (Windows answers "Access denied" or "Sharing violation").
func busy(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
