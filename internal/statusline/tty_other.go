//go:build !linux && !darwin

package statusline

import "os"

// terminal reports whether f is a character device: a terminal, here
// (this platform's terminal check is not linked in).
func terminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
