package cfgfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchangeFiles swaps a and b with renamex_np(RENAME_SWAP) (macOS 10.12;
// APFS and HFS+). Other file systems answer ENOTSUP.
func exchangeFiles(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return errNoExchange
	}
	return err
}
